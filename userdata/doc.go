// Package userdata reads EC2 user data as eksboot's users launch nodes with it:
// plain text, base64 of the whole document, gzip, and MIME multipart documents whose
// parts may themselves be base64 or gzip. It finds the AL2023-style NodeConfig parts
// (node.eks.aws/v1alpha1), decodes them strictly and merges them with nodeadm's rules,
// and it evaluates the shell-script, boothook and #cloud-config parts (write_files,
// bootcmd, runcmd) in cloud-init's order on a simulated node (Evaluate): scripts are
// parsed and interpreted by mvdan.cc/sh/v3 as bash would run them, with an in-memory
// file system, IMDS answered from a simulated instance, the text tools run
// in-process and every other program a no-op, so that render shows the
// /etc/eks/bootstrap.sh calls a node would make without running anything on the host.
//
// It is its own package because the bytes are untrusted: every input is bounded
// (MaxUserData, MaxDecoded, Limits on the evaluation's steps, time, output and
// depth), every error names the part and the field, and the code is pure (no disk,
// no network), so it can be fuzzed.
package userdata
