// Package nodesys renders the node's system files, the ones no Kubernetes component
// owns, and owns their paths: the systemd environment files of
// spec.instance.environment (the manager's DefaultEnvironment= and the kubelet's and
// containerd's Environment= drop-ins: one map, one size budget, so one renderer),
// /etc/hosts for a local cluster on AWS Outposts, systemd-resolved's drop-in
// (spec.instance.network), sys-fs-bpf.mount, and systemd-logind's drop-in (the
// kubelet's shutdown inhibitor delay). Files returns them as nodefile.Files naming
// the units that read each one, so that bootstrap restarts what a change affects.
// It also gives the arguments of the image's setup-local-disks helper.
//
// The name says the job: the node's system (systemd's managers and services), not a
// component's. Every function here is pure: inputs in, bytes out.
package nodesys
