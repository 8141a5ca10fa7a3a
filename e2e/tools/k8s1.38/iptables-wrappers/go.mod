// A stand-in of our own for sigs.k8s.io/iptables-wrappers v1.0.0, which the module proxy
// refuses and k8s.io/kubernetes v1.38.0-beta.0 requires: only what the kubelet links
// (pkg/kubelet/kubelet_network_linux.go). It reports no iptables on the host, so the test
// kubelet of e2e/tools/k8s1.38 skips its iptables hint and firewall chains, as a real
// kubelet does on a host with nftables only. Not a replacement to ship.
module sigs.k8s.io/iptables-wrappers

go 1.24.0
