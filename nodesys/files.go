package nodesys

import (
	"time"

	"github.com/eksboot/eksboot/assets"
	"github.com/eksboot/eksboot/nodefile"
)

// Node paths of the system files Files writes besides the environment files, the
// resolved drop-in and the logind drop-in.
const (
	// HostsPath is /etc/hosts, which a local cluster on AWS Outposts gets its API
	// server's address in.
	HostsPath = "/etc/hosts"
	// BPFMountPath is the unit that mounts the BPF file system.
	BPFMountPath = "/etc/systemd/system/sys-fs-bpf.mount"
)

// The units that read the system files.
const (
	LogindUnit   = "systemd-logind.service"
	ResolvedUnit = "systemd-resolved.service"
	BPFMountUnit = "sys-fs-bpf.mount"
)

// The units that spec.instance.environment's files set the environment of (the
// kubelet's and containerd's, kubeletconf.Unit and containerdconf.Unit): the
// manager's DefaultEnvironment= reaches both when they restart.
const (
	kubeletUnit    = "kubelet.service"
	containerdUnit = "containerd.service"
)

// Node is what the system files are made of on one node.
type Node struct {
	// Environment are spec.instance.environment's files (InstanceEnvironment); one
	// with Data nil is left as it is.
	Environment []EnvironmentFile
	// Resolved is spec.instance.network's drop-in (ResolvedConfig; nil: none).
	Resolved []byte
	// Hosts is /etc/hosts with the API server's address (nil: left as it is).
	Hosts []byte
	// BPFMount installs sys-fs-bpf.mount.
	BPFMount bool
	// ShutdownDelay is how long the kubelet may hold the node's shutdown: logind's
	// InhibitDelayMaxSec (LogindConfig). 0 removes the drop-in.
	ShutdownDelay time.Duration
}

// Files renders the system files, each naming the units that read it: the
// environment files (the manager's restarts containerd and the kubelet, whose
// environment it sets; the others their unit), /etc/hosts (none: read at each
// lookup), the resolved drop-in (systemd-resolved), sys-fs-bpf.mount (itself) and
// the logind drop-in (systemd-logind, which re-reads it on SIGHUP). It is pure.
func Files(n Node) ([]nodefile.File, error) {
	var files []nodefile.File
	for _, e := range n.Environment {
		if e.Data == nil {
			continue
		}
		units := []string{e.Unit}
		if e.Unit == "" {
			units = []string{containerdUnit, kubeletUnit}
		}
		files = append(files, nodefile.File{Path: e.Path, Data: e.Data, Mode: nodefile.Mode, Units: units, Reload: true, From: "spec.instance.environment"})
	}
	if n.Hosts != nil {
		files = append(files, nodefile.File{Path: HostsPath, Data: n.Hosts, Mode: nodefile.Mode})
	}
	if n.Resolved != nil {
		files = append(files, nodefile.File{Path: ResolvedDropInPath, Data: n.Resolved, Mode: nodefile.Mode, Units: []string{ResolvedUnit}, From: "spec.instance.network"})
	}
	if n.BPFMount {
		files = append(files, nodefile.File{Path: BPFMountPath, Data: assets.SysFsBPFMount, Mode: nodefile.Mode, Units: []string{BPFMountUnit}, Reload: true})
	}
	logind := []string{LogindUnit}
	if n.ShutdownDelay > 0 {
		b, err := LogindConfig(n.ShutdownDelay)
		if err != nil {
			return nil, err
		}
		files = append(files, nodefile.File{Path: LogindDropIn, Data: b, Mode: nodefile.Mode, Units: logind})
	} else {
		files = append(files, nodefile.File{Path: LogindDropIn, Remove: true, Units: logind})
	}
	return files, nil
}
