// Package containerdconf renders containerd's files: config.toml (version 2 for
// containerd 1, version 3 for containerd 2, from the image's template or eksboot's,
// with the sandbox image, the runtimes the node has and the NodeConfig's
// spec.containerd.config overlays merged as TOML), the base OCI runtime spec
// (spec.containerd.baseRuntimeSpec over the embedded default), and FastImagePull's
// SOCI snapshotter: its own config.toml, the containerd.service drop-in that starts
// containerd after it, and the proxy-plugin overlay; and the AMI's
// sandbox-image.service. Files returns them as nodefile.Files, each naming the units
// that read it, with the paths, which are this package's.
//
// For the inputs of the bootstrap.sh golden cases, config.toml matches what
// bootstrap.sh wrote byte for byte (testdata/bootstrap-sh/). Every function here
// is pure: inputs in, bytes out.
package containerdconf
