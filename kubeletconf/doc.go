// Package kubeletconf renders the files that bootstrap.sh writes for the kubelet:
// kubelet-config.json, the kubelet kubeconfig, the kubelet.service drop-ins that set
// KUBELET_ARGS and KUBELET_EXTRA_ARGS, and containerd's config.toml.
//
// Every function here is pure: inputs in, bytes out. Nothing reads or writes the
// disk, calls IMDS or EC2, or talks to systemd; callers gather the per-node values
// and write the results.
//
// For the inputs of the bootstrap.sh golden cases the output matches what
// bootstrap.sh wrote (byte for byte for the kubeconfig, the drop-ins and the
// containerd configuration; as equal JSON for kubelet-config.json). Where
// bootstrap.sh's shell quoting breaks on unusual values (a ' or % in the kubelet
// arguments, a ',' or '&' in the API server URL), these renderers quote the values
// so that they reach the kubelet unchanged instead.
package kubeletconf
