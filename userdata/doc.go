// Package userdata reads EC2 user data as eksboot's users launch nodes with it:
// plain text, base64 of the whole document, gzip, and MIME multipart documents whose
// parts may themselves be base64 or gzip (Parse). Beyond the bytes it knows one
// thing: which parts cloud-init acts on (CloudInitActsOn), from which the kubelet
// may start before cloud-init's last stage when it acts on none (EarlyKubelet).
// What the parts mean is for package nodeconfig (the NodeConfig parts, on the boot
// path) and package render/sim (the scripts and #cloud-config parts, for eksboot
// render only).
//
// It is its own package because the bytes are untrusted: every input is bounded
// (MaxUserData, MaxDecoded, the nesting of layers), every error names the part, and
// the code is pure (no disk, no network), so it can be fuzzed.
package userdata
