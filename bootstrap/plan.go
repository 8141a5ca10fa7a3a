package bootstrap

import (
	"errors"
	"fmt"
	"strings"

	"github.com/eksboot/eksboot/assets"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/rootfs"
)

// Node is the computed state of the node: every file eksboot owns, with its content.
type Node struct {
	Files      []rootfs.File
	Remove     []string // files that must not exist
	Dirs       []string // directories that must exist
	NodeIP     string
	PauseImage string
	ClusterDNS []string
	MaxPods    int
	// KubeletArgs and KubeletExtraArgs are the environment values of the drop-ins.
	KubeletArgs      string
	KubeletExtraArgs string
	// BPFUnit is set when eksboot installs sys-fs-bpf.mount; SandboxImageUnit when it
	// installs the AMI's sandbox-image.service.
	BPFUnit          bool
	SandboxImageUnit bool
}

// Compute works out the whole node from the validated configuration and the facts. It
// is pure: no network, disk or D-Bus.
func Compute(c *Config, f *Facts) (*Node, error) {
	n := &Node{MaxPods: f.MaxPods, KubeletExtraArgs: c.KubeletExtraArgs}
	var err error
	if n.NodeIP, err = nodeIP(c.IPFamily, f.Instance.LocalIPv4, f.Instance.IPv6s); err != nil {
		return nil, err
	}
	if n.ClusterDNS, err = ClusterDNS(c, f.Instance.VPCIPv4CIDRs); err != nil {
		return nil, err
	}
	n.PauseImage = PauseImage(c, f.Instance.Region, f.Instance.Domain, f.FIPSHost)

	cfg, err := kubeletconf.Build(kubeletconf.Input{
		ClusterDNS:      n.ClusterDNS,
		MaxPods:         int32(reservedMaxPods(c, f.MaxPods)),
		SetMaxPods:      c.UseMaxPods,
		CPUs:            f.CPUs,
		ProviderID:      fmt.Sprintf("aws:///%s/%s", f.Instance.AvailabilityZone, f.Instance.InstanceID),
		KubeletVersion:  f.KubeletVersion.String(),
		ReservedCgroups: !c.ReservedCPUs,

		ShutdownGracePeriod:             c.ShutdownGracePeriod,
		ShutdownGracePeriodCriticalPods: c.ShutdownGracePeriodCriticalPods,
	})
	if err != nil {
		return nil, fmt.Errorf("kubelet config: %w", err)
	}
	if cfg, err = kubeletconf.Overlay(cfg, c.KubeletConfigOverlay); err != nil {
		return nil, fmt.Errorf("spec.kubelet.config: %w", err)
	}
	kubeletJSON, err := kubeletconf.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubelet config: %w", err)
	}
	kubeconfig := kubeletconf.Kubeconfig{
		Server:      c.APIServerEndpoint,
		ClusterName: c.ClusterName,
		Region:      f.Instance.Region,
		CAFile:      pathCA,
	}.Render()

	n.KubeletArgs = strings.Join([]string{
		"--node-ip=" + n.NodeIP,
		"--pod-infra-container-image=" + n.PauseImage,
		"--v=2",
		"--hostname-override=" + f.PrivateDNSName,
		"--cloud-provider=external",
	}, " ")
	argsDropIn, err := kubeletconf.EnvDropIn("KUBELET_ARGS", n.KubeletArgs)
	if err != nil {
		return nil, err
	}

	containerd, err := kubeletconf.MergeContainerdConfig(string(kubeletconf.ContainerdConfig(f.ContainerdTemplate, n.PauseImage)), c.ContainerdOverlay)
	if err != nil {
		return nil, fmt.Errorf("spec.containerd.config: %w", err) // the overlay's only source
	}

	n.Files = []rootfs.File{
		{Path: pathCA, Data: c.CA, Mode: 0o644, Secret: true},
		{Path: pathKubeconfig, Data: kubeconfig, Mode: 0o644},
		{Path: pathKubeletConfig, Data: kubeletJSON, Mode: 0o644},
		{Path: pathContainerdConfig, Data: containerd, Mode: 0o644},
		{Path: pathKubeletUnit, Data: assets.KubeletService, Mode: 0o644},
		{Path: pathArgsDropIn, Data: argsDropIn, Mode: 0o644},
	}
	if f.ClusterCache != nil {
		n.Files = append(n.Files, *f.ClusterCache)
	}
	if c.KubeletExtraArgs != "" {
		extra, err := kubeletconf.EnvDropIn("KUBELET_EXTRA_ARGS", c.KubeletExtraArgs)
		if err != nil {
			return nil, fmt.Errorf("--kubelet-extra-args: %w", err)
		}
		n.Files = append(n.Files, rootfs.File{Path: pathExtraArgsDropIn, Data: extra, Mode: 0o644})
	} else {
		n.Remove = append(n.Remove, pathExtraArgsDropIn)
	}
	if f.SandboxImageUnit != nil {
		n.SandboxImageUnit = true
		n.Files = append(n.Files, rootfs.File{Path: pathSandboxUnit, Data: f.SandboxImageUnit, Mode: 0o644})
	}
	if c.MountBPFFS && !f.BPFMounted {
		n.BPFUnit = true
		n.Files = append(n.Files, rootfs.File{Path: pathBPFUnit, Data: assets.SysFsBPFMount, Mode: 0o644})
	}
	if c.ShutdownGracePeriod > 0 {
		logind, err := kubeletconf.LogindConfig(c.ShutdownGracePeriod)
		if err != nil {
			return nil, err
		}
		n.Files = append(n.Files, rootfs.File{Path: kubeletconf.LogindDropIn, Data: logind, Mode: 0o644})
	} else {
		n.Remove = append(n.Remove, kubeletconf.LogindDropIn)
	}
	n.Dirs = []string{"/etc/containerd/config.d", "/etc/cni/net.d"}
	return n, nil
}

// nodeIP is the kubelet's --node-ip: IMDS local-ipv4, or for IPv6 the first address
// of the primary interface (bootstrap.sh put every address, one per line, and broke
// the drop-in when there were several).
func nodeIP(family, ipv4 string, ipv6s []string) (string, error) {
	if family == "ipv6" {
		if len(ipv6s) == 0 {
			return "", errors.New("--ip-family ipv6, but IMDS lists no IPv6 address for the primary network interface (latest/meta-data/network/interfaces/macs/<mac>/ipv6s)")
		}
		return ipv6s[0], nil
	}
	if ipv4 == "" {
		return "", errors.New("IMDS latest/meta-data/local-ipv4 is empty: the instance has no private IPv4 address (use --ip-family ipv6 on IPv6 clusters)")
	}
	return ipv4, nil
}
