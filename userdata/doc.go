// Package userdata reads EC2 user data as eksboot's users launch nodes with it:
// plain text, base64 of the whole document, gzip, and MIME multipart documents whose
// parts may themselves be base64 or gzip. It finds the AL2023-style NodeConfig parts
// (node.eks.aws/v1alpha1), decodes them strictly and merges them with nodeadm's rules,
// and it finds the /etc/eks/bootstrap.sh command line in shell-script parts without
// running anything.
//
// It is its own package because the bytes are untrusted: every input is bounded
// (MaxUserData, MaxDecoded), every error names the part and the field, and the code is
// pure (no disk, no network), so it can be fuzzed.
package userdata
