// Package assets holds the files eksboot embeds in its binary or installs on a node
// image: the instance max-pods table, the kubelet and containerd configuration
// templates, and the systemd units. Keeping them as plain files (not Go strings) lets
// the Packer provisioning, reviewers and diff tools see exactly what ships.
package assets

import _ "embed"

// ENIMaxPods is eni-max-pods.txt from aws/amazon-vpc-cni-k8s: a comment header and
// one "<instance-type> <max-pods>" row per instance type, as bootstrap.sh reads it
// from /etc/eks/eni-max-pods.txt.
//
//go:embed eni-max-pods.txt
var ENIMaxPods string

// KubeletConfig is the EKS AMI's kubelet-config.json template: the defaults every
// node starts from before eksboot fills in the per-node values.
//
//go:embed kubelet-config.json
var KubeletConfig []byte

// ContainerdConfig is the EKS AMI's containerd 1.7 configuration template. The literal
// SANDBOX_IMAGE is replaced with the pause image of the node's region.
//
//go:embed containerd-config.toml
var ContainerdConfig string

// KubeletService is the kubelet unit (containerd variant). Its flags come from the
// drop-ins eksboot writes to kubelet.service.d/.
//
//go:embed kubelet.service
var KubeletService []byte

// SysFsBPFMount is the unit that mounts the BPF file system at /sys/fs/bpf.
//
//go:embed sys-fs-bpf.mount
var SysFsBPFMount []byte

// EksbootConfigService is the unit of `eksboot init --phase config`: the files of a
// NodeConfig node written before cloud-init runs the user-data scripts.
//
//go:embed eksboot-config.service
var EksbootConfigService []byte

// EksbootRunService is the unit of `eksboot init --phase run`: containerd and kubelet
// (re)started after cloud-init's last stage.
//
//go:embed eksboot-run.service
var EksbootRunService []byte

// SandboxImagePlaceholder is the text in ContainerdConfig (and in a user's
// --containerd-config-file) that is replaced with the pause image reference.
const SandboxImagePlaceholder = "SANDBOX_IMAGE"
