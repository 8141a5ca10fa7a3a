package containerdconf

import (
	"fmt"

	"github.com/eksboot/eksboot/nodefile"
)

// Node paths of containerd's files (SOCIConfigPath and SOCIContainerdDropInPath are
// the snapshotter's).
const (
	ConfigPath          = "/etc/containerd/config.toml"
	BaseRuntimeSpecPath = "/etc/containerd/base-runtime-spec.json"
	// SandboxImageUnitPath is the AMI's sandbox-image.service, which pulls the
	// sandbox image into containerd's store.
	SandboxImageUnitPath = "/etc/systemd/system/sandbox-image.service"
)

// Unit is containerd's systemd unit; SandboxImageUnit is the AMI's unit that pulls
// the sandbox image, restarted after containerd.
const (
	Unit             = "containerd.service"
	SandboxImageUnit = "sandbox-image.service"
)

// kubeletUnit is the kubelet's unit (kubeletconf.Unit), which reads
// sandbox-image.service's file: the kubelet restarts when it changes, as it did
// before the renderers were split.
const kubeletUnit = "kubelet.service"

// Node is what containerd's files are made of on one node.
type Node struct {
	// Config is config.toml's input; Files sets its BaseRuntimeSpec.
	Config ContainerdInput
	// BaseRuntimeSpec writes the base OCI runtime spec, with BaseRuntimeSpecOverlay
	// (spec.containerd.baseRuntimeSpec) over the embedded default.
	BaseRuntimeSpec        bool
	BaseRuntimeSpecOverlay map[string]any
	// SOCIGzip is the snapshotter's gzip helper (SOCIConfig) when Config.SOCI is set.
	SOCIGzip string
	// SandboxImageUnit is the AMI's sandbox-image.service, copied into
	// /etc/systemd/system (nil: the AMI has none).
	SandboxImageUnit []byte
}

// Files renders containerd's files, each naming the units that read it: config.toml
// and the base runtime spec (containerd.service); with FastImagePull the
// snapshotter's config.toml (soci-snapshotter.service and containerd.service) and
// the containerd.service drop-in that orders it after the snapshotter (removed
// without FastImagePull; the snapshotter's own file stays, the image may ship one);
// and the AMI's sandbox-image.service. It is pure.
func Files(n Node) ([]nodefile.File, error) {
	var files []nodefile.File
	var baseSpec []byte
	cin := n.Config
	if n.BaseRuntimeSpec {
		var err error
		if baseSpec, err = BaseRuntimeSpec(n.BaseRuntimeSpecOverlay); err != nil {
			return nil, fmt.Errorf("spec.containerd.baseRuntimeSpec: %w", err)
		}
		cin.BaseRuntimeSpec = BaseRuntimeSpecPath
	}
	config, err := Containerd(cin)
	if err != nil {
		return nil, err
	}
	units := []string{Unit}
	files = append(files, nodefile.File{Path: ConfigPath, Data: config, Mode: nodefile.Mode, Units: units, From: "spec.containerd.config (with the containerd config template)"})
	if baseSpec != nil {
		files = append(files, nodefile.File{Path: BaseRuntimeSpecPath, Data: baseSpec, Mode: nodefile.Mode, Units: units, From: "spec.containerd.baseRuntimeSpec"})
	}
	if cin.SOCI {
		dropIn, err := FastImagePullContainerdDropIn()
		if err != nil {
			return nil, err
		}
		files = append(files,
			nodefile.File{Path: SOCIConfigPath, Data: SOCIConfig(n.SOCIGzip), Mode: nodefile.Mode, Units: []string{SOCIUnit, Unit}},
			nodefile.File{Path: SOCIContainerdDropInPath, Data: dropIn, Mode: nodefile.Mode, Units: units, Reload: true})
	} else {
		files = append(files, nodefile.File{Path: SOCIContainerdDropInPath, Remove: true, Units: units, Reload: true})
	}
	if n.SandboxImageUnit != nil {
		files = append(files, nodefile.File{Path: SandboxImageUnitPath, Data: n.SandboxImageUnit, Mode: nodefile.Mode, Units: []string{kubeletUnit}, Reload: true})
	}
	return files, nil
}
