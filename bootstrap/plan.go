package bootstrap

import (
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/eksboot/eksboot/assets"
	"github.com/eksboot/eksboot/containerdconf"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/nodesys"
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
	// SOCIPauseTar is the cached pause image imported into the SOCI snapshotter after
	// containerd's restart ("": none; soci.go), with the ctr of ContainerdMajor.
	SOCIPauseTar    string
	ContainerdMajor int
	// BPFUnit is set when eksboot installs sys-fs-bpf.mount; SandboxImageUnit when it
	// installs the AMI's sandbox-image.service.
	BPFUnit          bool
	SandboxImageUnit bool
	// Profile is the image profile the node was computed for.
	Profile string
}

// Compute works out the whole node from the validated configuration and the facts. It
// is pure: no network, disk or D-Bus.
func Compute(c *Config, f *Facts) (*Node, error) {
	n := &Node{MaxPods: f.MaxPods, KubeletExtraArgs: c.KubeletExtraArgs, Profile: f.Profile.Name, ContainerdMajor: f.ContainerdMajor}
	p, row := f.Profile, f.Kubelet
	var err error
	cl := f.Cluster
	if n.NodeIP, err = nodeIP(cl.IPFamily, f.Instance.LocalIPv4, f.Instance.IPv6s); err != nil {
		return nil, err
	}
	if n.ClusterDNS, err = ClusterDNS(c.DNSClusterIPs, cl, f.Instance.VPCIPv4CIDRs); err != nil {
		return nil, err
	}
	n.PauseImage = PauseImage(c, f.Instance.Region, f.Instance.Domain, f.FIPSHost)
	if p.SandboxImage != "" && !c.PauseImageGiven {
		n.PauseImage = p.SandboxImage
	}
	cfg, kubeletJSON, err := buildKubeletConfig(c, f, n)
	if err != nil {
		return nil, err
	}
	// The token names the cluster; a local cluster on AWS Outposts by its ID, in the
	// bootstrap kubeconfig of the kubelet's TLS bootstrap (outpost.go).
	tokenKubeconfig := kubeletconf.Kubeconfig{
		Server:      cl.Endpoint,
		ClusterName: c.ClusterName,
		Region:      f.Instance.Region,
		CAFile:      pathCA,
		Auth:        p.KubeconfigAuth,
	}
	kubeconfig := tokenKubeconfig.Render()
	var bootstrapKubeconfig []byte
	if cl.LocalOutpost {
		tokenKubeconfig.ClusterName = cl.ID
		bootstrapKubeconfig = tokenKubeconfig.Render()
		kubeconfig = kubeletconf.ClientCertKubeconfig(cl.Endpoint, pathCA, PathKubeletClientCert)
	}

	n.KubeletArgs = strings.Join(kubeletArgs(c, n, f), " ")
	argsDropIn, err := kubeletconf.EnvDropIn(kubeletconf.KubeletArgsVar, n.KubeletArgs)
	if err != nil {
		return nil, err
	}

	containerd, baseSpec, err := containerdConfig(c, f, n)
	if err != nil {
		return nil, err
	}

	n.Files = []rootfs.File{
		{Path: pathCA, Data: cl.CA, Mode: 0o644, Secret: true},
		{Path: pathKubeconfig, Data: kubeconfig, Mode: 0o644},
		{Path: pathKubeletConfig, Data: kubeletJSON, Mode: 0o644},
		{Path: pathContainerdConfig, Data: containerd, Mode: 0o644},
		{Path: pathKubeletUnit, Data: assets.KubeletService, Mode: 0o644},
		{Path: pathArgsDropIn, Data: argsDropIn, Mode: 0o644},
	}
	environment, err := nodesys.InstanceEnvironment(c.Environment)
	if err != nil {
		return nil, err
	}
	for _, e := range environment {
		if e.Data != nil {
			n.Files = append(n.Files, rootfs.File{Path: e.Path, Data: e.Data, Mode: 0o644})
		}
	}
	if bootstrapKubeconfig != nil {
		n.Files = append(n.Files, rootfs.File{Path: pathBootstrapKubeconfig, Data: bootstrapKubeconfig, Mode: 0o644})
	} else {
		n.Remove = append(n.Remove, pathBootstrapKubeconfig)
	}
	if hosts, ok := f.APIServerHosts.HostsFile(); ok {
		n.Files = append(n.Files, rootfs.File{Path: pathHosts, Data: hosts, Mode: 0o644})
	}
	resolved, err := nodesys.ResolvedConfig(c.Nameservers, c.SearchDomains)
	if err != nil {
		return nil, err
	}
	if resolved != nil {
		n.Files = append(n.Files, rootfs.File{Path: nodesys.ResolvedDropInPath, Data: resolved, Mode: 0o644})
	}
	if baseSpec != nil {
		n.Files = append(n.Files, rootfs.File{Path: pathBaseRuntimeSpec, Data: baseSpec, Mode: 0o644})
	}
	if p.OwnsCredentialProviderConfig || !f.CredentialConfigOnImage {
		n.Files = append(n.Files, rootfs.File{Path: pathCredentialConfig, Data: kubeletconf.CredentialProviderConfigFor(row), Mode: 0o644})
	}
	if f.ClusterCache != nil {
		n.Files = append(n.Files, *f.ClusterCache)
	}
	if c.KubeletExtraArgs != "" {
		extra, err := kubeletconf.EnvDropIn(kubeletconf.KubeletExtraArgsVar, c.KubeletExtraArgs)
		if err != nil {
			return nil, fmt.Errorf("--kubelet-extra-args: %w", err)
		}
		n.Files = append(n.Files, rootfs.File{Path: pathExtraArgsDropIn, Data: extra, Mode: 0o644})
	} else {
		n.Remove = append(n.Remove, pathExtraArgsDropIn)
	}
	if f.SOCI {
		dropIn, err := containerdconf.FastImagePullContainerdDropIn()
		if err != nil {
			return nil, err
		}
		n.Files = append(n.Files,
			rootfs.File{Path: containerdconf.SOCIConfigPath, Data: containerdconf.SOCIConfig(f.SOCIGzip), Mode: 0o644},
			rootfs.File{Path: containerdconf.SOCIContainerdDropInPath, Data: dropIn, Mode: 0o644})
		n.SOCIPauseTar = f.PauseTar
	} else {
		// The snapshotter's own file stays: the image may ship one.
		n.Remove = append(n.Remove, containerdconf.SOCIContainerdDropInPath)
	}
	if f.SandboxImageUnit != nil {
		n.SandboxImageUnit = true
		n.Files = append(n.Files, rootfs.File{Path: pathSandboxUnit, Data: f.SandboxImageUnit, Mode: 0o644})
	}
	if f.Profile.WantsBPFMountUnit(c.MountBPFFS, f.BPFMounted) {
		n.BPFUnit = true
		n.Files = append(n.Files, rootfs.File{Path: pathBPFUnit, Data: assets.SysFsBPFMount, Mode: 0o644})
	}
	// logind must let the kubelet hold the shutdown as long as its configuration says,
	// spec.kubelet.config included.
	if shutdown := cfg.ShutdownGracePeriod.Duration; shutdown > 0 {
		logind, err := nodesys.LogindConfig(shutdown)
		if err != nil {
			return nil, err
		}
		n.Files = append(n.Files, rootfs.File{Path: nodesys.LogindDropIn, Data: logind, Mode: 0o644})
	} else {
		n.Remove = append(n.Remove, nodesys.LogindDropIn)
	}
	n.Dirs = []string{"/etc/containerd/config.d", "/etc/cni/net.d"}
	if err := checkFileSizes(n.Files); err != nil {
		return nil, err
	}
	return n, nil
}

// checkFileSizes refuses a node whose files the next run could not read back: it
// reads each file it owns, to compare, through rootfs.DefaultReadLimit, and would
// fail every boot after this one. The error names the input the file is made of.
func checkFileSizes(files []rootfs.File) error {
	for _, f := range files {
		if len(f.Data) <= rootfs.DefaultReadLimit {
			continue
		}
		from := "its inputs"
		switch f.Path {
		case pathContainerdConfig:
			from = "spec.containerd.config (with the containerd config template)"
		case pathBaseRuntimeSpec:
			from = "spec.containerd.baseRuntimeSpec"
		case pathKubeletConfig:
			from = "spec.kubelet.config"
		case pathExtraArgsDropIn:
			from = "--kubelet-extra-args (spec.kubelet.flags)"
		case nodesys.ResolvedDropInPath:
			from = "spec.instance.network"
		case nodesys.ManagerEnvironmentPath, nodesys.KubeletEnvironmentPath, nodesys.ContainerdEnvironmentPath:
			from = "spec.instance.environment"
		}
		return fmt.Errorf("%s: %s would be %d bytes, more than the %d eksboot reads back at the next boot", from, f.Path, len(f.Data), rootfs.DefaultReadLimit)
	}
	return nil
}

// buildKubeletConfig builds kubelet-config.json for Compute: the template with the
// computed values (n's cluster DNS), the kubelet table's gates and shutdown defaults,
// then spec.kubelet.config over it. It returns the configuration and its bytes.
func buildKubeletConfig(c *Config, f *Facts, n *Node) (*kubeletconf.KubeletConfiguration, []byte, error) {
	p, row := f.Profile, f.Kubelet
	gates := maps.Clone(row.FeatureGates)
	if p.CredentialProvidersGate && row.CredentialProvidersGate {
		gates["KubeletCredentialProviders"] = true
	}
	shutdown, critical := c.ShutdownGracePeriod, c.ShutdownGracePeriodCriticalPods
	if !c.ShutdownGiven && row.GracefulShutdown {
		shutdown, critical = DefaultShutdownGracePeriod, DefaultShutdownGracePeriodCriticalPods
	}

	cfg, err := kubeletconf.Build(kubeletconf.Input{
		ClusterDNS:      n.ClusterDNS,
		MaxPods:         int32(reservedMaxPods(c, f.MaxPods)),
		SetMaxPods:      c.UseMaxPods,
		CPUs:            f.CPUs,
		ProviderID:      fmt.Sprintf("aws:///%s/%s", f.Instance.AvailabilityZone, f.Instance.InstanceID),
		KubeletVersion:  f.KubeletVersion,
		ReservedCgroups: !c.ReservedCPUs,
		FeatureGates:    gates,

		ShutdownGracePeriod:             shutdown,
		ShutdownGracePeriodCriticalPods: critical,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("kubelet config: %w", err)
	}
	if f.SOCI {
		cfg.ImageServiceEndpoint = containerdconf.SOCIImageServiceEndpoint
	}
	if cfg, err = kubeletconf.Overlay(cfg, c.KubeletConfigOverlay); err != nil {
		return nil, nil, fmt.Errorf("spec.kubelet.config: %w", err)
	}
	if total, critical := cfg.ShutdownGracePeriod.Duration, cfg.ShutdownGracePeriodCriticalPods.Duration; critical > total {
		// The kubelet refuses such a configuration and exits.
		return nil, nil, fmt.Errorf("spec.kubelet.config: shutdownGracePeriodCriticalPods %v is longer than shutdownGracePeriod %v (the kubelet refuses it): set both", critical, total)
	}
	kubeletJSON, err := kubeletconf.Marshal(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("kubelet config: %w", err)
	}
	return cfg, kubeletJSON, nil
}

// containerdConfig renders containerd's config.toml for Compute (the image's
// template or eksboot's, the pause image n has, the NodeConfig's TOML parts) and the
// base runtime spec when the profile or the NodeConfig has one (nil otherwise).
func containerdConfig(c *Config, f *Facts, n *Node) (containerd, baseSpec []byte, err error) {
	p := f.Profile
	cin := containerdconf.ContainerdInput{
		Major:         f.ContainerdMajor,
		Minor:         f.ContainerdMinor,
		Template:      f.ContainerdTemplate,
		TemplateName:  f.ContainerdTemplateSource,
		SandboxImage:  n.PauseImage,
		NvidiaRuntime: f.NvidiaRuntime,
		RuncBinary:    f.RuncBinary,
		Overlays:      c.ContainerdOverlays,
		SOCI:          f.SOCI,
	}
	if p.BaseRuntimeSpec || c.BaseRuntimeSpecOverlay != nil { // a NodeConfig that sets one gets it on any image
		if baseSpec, err = containerdconf.BaseRuntimeSpec(c.BaseRuntimeSpecOverlay); err != nil {
			return nil, nil, fmt.Errorf("spec.containerd.baseRuntimeSpec: %w", err)
		}
		cin.BaseRuntimeSpec = pathBaseRuntimeSpec
	}
	containerd, err = containerdconf.Containerd(cin)
	if err != nil {
		return nil, nil, err
	}

	return containerd, baseSpec, nil
}

// kubeletArgs are the kubelet flags of 10-kubelet-args.conf, by the image profile and
// the kubelet table: bootstrap.sh's (node IP, pause image while the kubelet has the
// flag, verbosity, node name, external cloud provider), then what the image needs.
func kubeletArgs(c *Config, n *Node, f *Facts) []string {
	p, row := f.Profile, f.Kubelet
	args := []string{"--node-ip=" + n.NodeIP}
	if row.PodInfraContainerImageFlag && (!p.PodInfraFlagAsNodeadm || row.PodInfraContainerImageMatters) {
		args = append(args, "--pod-infra-container-image="+n.PauseImage)
	}
	if !c.KubeletVerbosityGiven { // a --v flag would win over spec.kubelet.config's logging.verbosity
		args = append(args, "--v=2")
	}
	args = append(args, "--hostname-override="+f.PrivateDNSName, "--cloud-provider=external")
	if p.RuntimeCgroups != "" {
		args = append(args, "--runtime-cgroups="+p.RuntimeCgroups)
	}
	if f.Cluster.LocalOutpost {
		// With the unit's --kubeconfig, the client-certificate kubeconfig.
		args = append(args, "--bootstrap-kubeconfig="+pathBootstrapKubeconfig)
	}
	if f.NvidiaGPU && f.KubeletVersion.AtLeast(1, 35) {
		// As nodeadm: GPU nodes say so before the device plugin runs.
		args = append(args, "--node-labels=nvidia.com/gpu.present=true")
	}
	return args
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
