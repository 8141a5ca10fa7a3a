// Package userdata reads EC2 user data as eksboot's users launch nodes with it:
// plain text, base64 of the whole document, gzip, and MIME multipart documents whose
// parts may themselves be base64 or gzip (Parse). That is all it does: what the
// parts mean is for package nodeconfig (the NodeConfig parts, on the boot path) and
// package render/sim (the scripts and #cloud-config parts, for eksboot render only).
//
// It is its own package because the bytes are untrusted: every input is bounded
// (MaxUserData, MaxDecoded, the nesting of layers), every error names the part, and
// the code is pure (no disk, no network), so it can be fuzzed.
package userdata
