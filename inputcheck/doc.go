// Package inputcheck holds the bounds that every renderer's input keeps, whichever
// front end it came from: a TOML or JSON document is scanned for depth before it is
// decoded (MaxDepth, 64 levels), a decoded tree is measured again, and a value that
// reaches a one-line file is text of one line with no control character. nodeconfig
// checks a NodeConfig with it when it decodes one; kubeletconf and containerdconf
// check their own inputs with it again, for callers that decoded nothing. It is
// pure.
package inputcheck
