// Package kubeletconf renders the kubelet's files: kubelet-config.json, the kubelet
// kubeconfig, the kubelet.service drop-ins that set KUBELET_ARGS and
// KUBELET_EXTRA_ARGS, and the image credential provider's config; and it holds the
// kubelet table by minor (kubelets.go) and the one kubelet Version type.
// Files returns them as nodefile.Files, each naming kubelet.service, so that
// bootstrap restarts the kubelet when one changes; the paths are this package's.
// containerd's files are containerdconf's, the node's system files nodesys's.
//
// kubelet-config.json is built on KubeletConfiguration, a copy of the JSON shape of
// k8s.io/kubelet's v1beta1 type that kubeletconf/internal/typegen generates from the
// upstream package (zz_generated_types.go). The copy keeps the upstream package, and
// the Prometheus client and feature-gate machinery it drags in, out of the binary,
// whose start-up they slowed by about 4 ms; the tests decode the same configurations
// into both and require the same result.
//
// Every function here is pure: inputs in, bytes out. Nothing reads or writes the
// disk, calls IMDS or EC2, or talks to systemd; callers gather the per-node values
// and write the results.
//
// For the inputs of the bootstrap.sh golden cases the output matches what
// bootstrap.sh wrote (byte for byte for the kubeconfig and the drop-ins; as equal
// JSON for kubelet-config.json). Where bootstrap.sh's shell quoting breaks on
// unusual values (a ' or % in the kubelet arguments, a ',' or '&' in the API server
// URL), these renderers quote the values so that they reach the kubelet unchanged
// instead.
package kubeletconf

//go:generate go run ./internal/typegen -gomod ../go.mod -out zz_generated_types.go
//go:generate go run ./internal/templategen -in ../assets/kubelet-config.json -out zz_generated_template.go
