package assets

import _ "embed"

// ContainerdConfigV3 is eksboot's containerd 2.x configuration template (config
// version 3): the settings of ContainerdConfig under the plugin names containerd 2
// gives them (io.containerd.cri.v1.images and io.containerd.cri.v1.runtime), with
// enable_cdi on and the CNI plugins' folder as bin_dirs (containerd 2.1 and later;
// containerdconf.Containerd writes bin_dir for a containerd 2.0). The literal SANDBOX_IMAGE is replaced with the sandbox image, which
// containerd 2 pins. The runc binary, the base runtime spec and the NVIDIA runtime
// depend on the image and are added by containerdconf.Containerd, not written here.
//
//go:embed containerd-config-v3.toml
var ContainerdConfigV3 string

// BaseRuntimeSpec is the OCI runtime spec every container of an AL2023 node starts
// from (containerd's base_runtime_spec): containerd's defaults with RLIMIT_NOFILE
// soft 65536 and hard 1048576, as nodeadm writes it to
// /etc/containerd/base-runtime-spec.json. It is in containerdconf.BaseRuntimeSpec's
// output form (sorted keys, two-space indent, a final newline).
//
//go:embed base-runtime-spec.json
var BaseRuntimeSpec []byte
