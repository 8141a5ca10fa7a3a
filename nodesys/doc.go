// Package nodesys renders the node's system files, the ones no Kubernetes component
// owns: systemd-logind's drop-in (the kubelet's shutdown inhibitor delay),
// systemd-resolved's drop-in (spec.instance.network), the systemd environment files
// of spec.instance.environment (the manager's DefaultEnvironment= and the kubelet's
// and containerd's Environment= drop-ins: one map, one size budget, so one
// renderer), and the arguments of the image's setup-local-disks helper.
//
// Every function here is pure: inputs in, bytes out.
package nodesys
