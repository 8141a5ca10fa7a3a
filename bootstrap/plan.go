package bootstrap

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/eksboot/eksboot/containerdconf"
	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/nodefile"
	"github.com/eksboot/eksboot/nodesys"
	"github.com/eksboot/eksboot/rootfs"
	"github.com/eksboot/eksboot/unitenv"
)

// Node is the computed state of the node: every file eksboot owns, with its content.
type Node struct {
	// Owned are the files the renderers returned (kubeletconf's, containerdconf's,
	// nodesys's, then eksboot's own cluster cache), each with the units that read
	// it; Actions restarts from them. Files and Remove are their write plan.
	Owned      []nodefile.File
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
	// SandboxImageUnit is set when eksboot installs the AMI's sandbox-image.service,
	// which restarts after containerd.
	SandboxImageUnit bool
	// Profile is the image profile the node was computed for.
	Profile string
	// Warnings are what the node's kubelet accepts but should not be given (a
	// removed flag eksboot left out, a locked gate), for the log and render.
	Warnings []string
	// KubeletConfigFrom names the kubelet's configurations that come from the user
	// (kubeletUserConfigs).
	KubeletConfigFrom []string
	// KubeletEffective is the configuration the kubelet runs with when drop-ins
	// apply over kubelet-config.json (the image's, or the NodeConfig's), flags
	// aside; nil when kubelet-config.json is all of it.
	KubeletEffective []byte
}

// Compute works out the whole node from the validated configuration and the facts. It
// is pure: no network, disk or D-Bus.
func Compute(c *Config, f *Facts) (*Node, error) {
	n := &Node{MaxPods: f.MaxPods, Profile: f.Profile.Name, ContainerdMajor: f.ContainerdMajor}
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
	kc, err := buildKubeletConfig(c, f, n)
	if err != nil {
		return nil, err
	}
	cfg := kc.Effective
	for _, u := range kubeletUserConfigs(c, f) {
		n.KubeletConfigFrom = append(n.KubeletConfigFrom, u.Name)
	}
	if kc.Effective != kc.Main {
		if n.KubeletEffective, err = kubeletconf.Marshal(kc.Effective); err != nil {
			return nil, err
		}
	}
	n.KubeletArgs = strings.Join(kubeletArgs(c, n, f), " ")
	if n.KubeletExtraArgs, err = acceptedByKubelet(c, f, cfg, n); err != nil {
		return nil, err
	}

	// Each component's renderer returns its files with the units that read them.
	kn := kubeletconf.Node{
		CA: cl.CA,
		// The token names the cluster; a local cluster on AWS Outposts by its ID, in
		// the bootstrap kubeconfig of the kubelet's TLS bootstrap (outpost.go).
		Kubeconfig: kubeletconf.Kubeconfig{
			Server:      cl.Endpoint,
			ClusterName: c.ClusterName,
			Region:      f.Instance.Region,
			Auth:        p.KubeconfigAuth,
		},
		KubeconfigTemplate: f.KubeconfigBase.Template,
		Config:             kc.Main,
		ConfigDir:          p.ConfigDir(row),
		NodeConfig:         kc.NodeConfig,
		Args:               n.KubeletArgs,
		ExtraArgs:          n.KubeletExtraArgs,
	}
	if cl.LocalOutpost {
		kn.ClientCert, kn.BootstrapClusterName = PathKubeletClientCert, cl.ID
	}
	if p.OwnsCredentialProviderConfig || !f.CredentialConfigOnImage {
		kn.CredentialProvider = &row
	}
	kubelet, err := kubeletconf.Files(kn)
	if err != nil {
		return nil, err
	}
	// The records of kubelet-config.json's base and of the kubeconfig's template go
	// first: renamed before their files, they know the new file and the old one,
	// whichever a crash leaves.
	record, err := f.KubeletBase.record(fileData(kubelet, kubeletconf.ConfigPath))
	if err != nil {
		return nil, err
	}
	kubeconfigRecord, err := f.KubeconfigBase.record(fileData(kubelet, kubeletconf.KubeconfigPath))
	if err != nil {
		return nil, err
	}
	containerd, err := containerdconf.Files(containerdNode(c, f, n))
	if err != nil {
		return nil, err
	}
	environment, err := nodesys.InstanceEnvironment(c.Environment)
	if err != nil {
		return nil, err
	}
	resolved, err := nodesys.ResolvedConfig(c.Nameservers, c.SearchDomains)
	if err != nil {
		return nil, err
	}
	hosts, _ := f.APIServerHosts.HostsFile()
	system, err := nodesys.Files(nodesys.Node{
		Environment: environment,
		Resolved:    resolved,
		Hosts:       hosts,
		BPFMount:    f.Profile.WantsBPFMountUnit(c.MountBPFFS, f.BPFMounted),
		// logind must let the kubelet hold the shutdown as long as its configuration
		// says, spec.kubelet.config included.
		ShutdownDelay: cfg.ShutdownGracePeriod.Duration,
	})
	if err != nil {
		return nil, err
	}
	n.Owned = slices.Concat([]nodefile.File{record, kubeconfigRecord}, kubelet, containerd, system)
	if f.ClusterCache != nil {
		cc := f.ClusterCache // eksboot's own: no unit reads it
		n.Owned = append(n.Owned, nodefile.File{Path: cc.Path, Data: cc.Data, Mode: cc.Mode, Secret: cc.Secret})
	}
	if f.SOCI {
		n.SOCIPauseTar = f.PauseTar
	}
	n.SandboxImageUnit = f.SandboxImageUnit != nil
	n.Files, n.Remove = writePlan(n.Owned)
	n.Dirs = []string{"/etc/containerd/config.d", "/etc/cni/net.d"}
	if p.ConfigDir(row) { // the kubelet exits when its --config-dir is missing
		n.Dirs = append(n.Dirs, kubeletconf.ConfigDropInDir)
	}
	if err := checkFileSizes(n.Owned); err != nil {
		return nil, err
	}
	return n, nil
}

// writePlan splits the renderers' files into the files to write and the paths to
// remove, in order, for rootfs.Root.Plan.
func writePlan(owned []nodefile.File) (files []rootfs.File, remove []string) {
	for _, f := range owned {
		if f.Remove {
			remove = append(remove, f.Path)
			continue
		}
		files = append(files, rootfs.File{Path: f.Path, Data: f.Data, Mode: f.Mode, Secret: f.Secret})
	}
	return files, remove
}

// checkFileSizes refuses a node whose files the next run could not read back: it
// reads each file it owns, to compare, through rootfs.DefaultReadLimit, and would
// fail every boot after this one. The error names the input the file is made of.
func checkFileSizes(files []nodefile.File) error {
	for _, f := range files {
		if len(f.Data) <= rootfs.DefaultReadLimit {
			continue
		}
		from := f.From
		if from == "" {
			from = "its inputs"
		}
		return fmt.Errorf("%s: %s would be %d bytes, more than the %d eksboot reads back at the next boot", from, f.Path, len(f.Data), rootfs.DefaultReadLimit)
	}
	return nil
}

// kubeletConfigs are the kubelet's configuration as Compute writes it and as the
// kubelet reads it.
type kubeletConfigs struct {
	// Main is kubelet-config.json.
	Main *kubeletconf.KubeletConfiguration
	// NodeConfig is the NodeConfig's spec.kubelet.config for its drop-in, on a
	// kubelet with a configuration directory; without one it is merged into Main.
	NodeConfig kubeletconf.CheckedOverlay
	// Effective is what the kubelet runs with, flags aside: Main with the drop-ins
	// over it (Main itself when there are none).
	Effective *kubeletconf.KubeletConfiguration
}

// buildKubeletConfig builds kubelet-config.json for Compute: its base (the node's
// file or eksboot's template, f.KubeletBase) with the computed values (n's cluster
// DNS), the kubelet table's gates and shutdown defaults; then spec.kubelet.config,
// into its drop-in where the kubelet reads one, else over the file; and the
// configuration the kubelet runs with, the image's drop-ins included (kubeletconf.Files
// marshals them).
func buildKubeletConfig(c *Config, f *Facts, n *Node) (kubeletConfigs, error) {
	p, row := f.Profile, f.Kubelet
	base := f.KubeletBase.Config
	gates := maps.Clone(row.FeatureGates)
	if p.CredentialProvidersGate && row.CredentialProvidersGate {
		gates["KubeletCredentialProviders"] = true
	}
	shutdown, critical := c.ShutdownGracePeriod, c.ShutdownGracePeriodCriticalPods
	if !c.ShutdownGiven && row.GracefulShutdown && !base.Has("shutdownGracePeriod") {
		shutdown, critical = DefaultShutdownGracePeriod, DefaultShutdownGracePeriodCriticalPods
	}

	cfg, err := kubeletconf.Build(kubeletconf.Input{
		Base:            base,
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
		return kubeletConfigs{}, fmt.Errorf("kubelet config (from %s): %w", f.KubeletBase.From, err)
	}
	if f.SOCI {
		cfg.ImageServiceEndpoint = containerdconf.SOCIImageServiceEndpoint
	}
	kc := kubeletConfigs{Main: cfg}
	dropIns := slices.Clone(f.KubeletDropIns)
	if p.ConfigDir(row) {
		kc.NodeConfig = c.KubeletConfigOverlay
		if kc.NodeConfig.Len() > 0 {
			dropIns = append(dropIns, kubeletconf.DropIn{Path: kubeletconf.NodeConfigDropInPath, Config: kc.NodeConfig})
		}
	} else if kc.Main, err = kubeletconf.Overlay(cfg, c.KubeletConfigOverlay); err != nil {
		return kubeletConfigs{}, fmt.Errorf("spec.kubelet.config: %w", err)
	}
	kubeletconf.SortDropIns(dropIns)
	if kc.Effective, err = kubeletconf.Effective(kc.Main, dropIns); err != nil {
		return kubeletConfigs{}, fmt.Errorf("%s: %w", kubeletconf.ConfigDropInDir, err)
	}
	return kc, nil
}

// kubeletUserConfig is a kubelet configuration that comes from the user rather than
// from eksboot, and its name.
type kubeletUserConfig struct {
	Name   string
	Config kubeletconf.CheckedOverlay
}

// kubeletUserConfigs are the kubelet's configurations that come from the user, in
// the order the kubelet merges them: the node's own kubelet-config.json when it is
// the base (what the image and the user data before bootstrap.sh made it); a
// NodeConfig's spec.kubelet.config, merged into that file, or, on a kubelet with a
// drop-in directory, one of its drop-ins; the directory's drop-ins (the image's, a
// script's) by name. Each was checked where it entered as a v1beta1
// KubeletConfiguration (kubeletconf.CheckConfigFile, CheckOverlay); this is the one
// place that lists them all, and acceptedByKubelet names by it the input that set a
// field the node's kubelet would refuse.
func kubeletUserConfigs(c *Config, f *Facts) []kubeletUserConfig {
	var out []kubeletUserConfig
	if b := f.KubeletBase; b.Config.Len() > 0 {
		out = append(out, kubeletUserConfig{Name: b.From, Config: b.Config})
	}
	dropIns := slices.Clone(f.KubeletDropIns)
	if o := c.KubeletConfigOverlay; o.Len() > 0 {
		if f.Profile.ConfigDir(f.Kubelet) {
			dropIns = append(dropIns, kubeletconf.DropIn{Path: kubeletconf.NodeConfigDropInPath, Config: o})
		} else {
			out = append(out, kubeletUserConfig{Name: "spec.kubelet.config", Config: o})
		}
	}
	kubeletconf.SortDropIns(dropIns)
	for _, d := range dropIns {
		name := d.Path
		if name == kubeletconf.NodeConfigDropInPath {
			name = "spec.kubelet.config"
		}
		out = append(out, kubeletUserConfig{Name: name, Config: d.Config})
	}
	return out
}

// setBy names the user's input that gives the kubelet its value of a top-level
// field: the last of the configurations the kubelet merges that sets it ("": one of
// eksboot's own values).
func setBy(users []kubeletUserConfig, field string) string {
	for i := len(users) - 1; i >= 0; i-- {
		if users[i].Config.Has(field) {
			return users[i].Name
		}
	}
	return ""
}

// fileData is the content of the file at path among files (nil: none).
func fileData(files []nodefile.File, path string) []byte {
	for _, f := range files {
		if f.Path == path {
			return f.Data
		}
	}
	return nil
}

// acceptedByKubelet holds the user's kubelet arguments and configuration to what the
// node's kubelet accepts (kubeletconf.CheckArgs and CheckConfig, for its version):
// it returns KUBELET_EXTRA_ARGS (the user's value as given, or without the removed
// flags eksboot leaves out) and adds the warnings to n; what the kubelet would refuse
// is a UsageError, every problem at once, before anything is written.
func acceptedByKubelet(c *Config, f *Facts, cfg *kubeletconf.KubeletConfiguration, n *Node) (string, error) {
	words, name := unitenv.SplitWords(c.KubeletExtraArgs), func(int) string { return "--kubelet-extra-args" }
	if c.KubeletFlags != nil {
		var from []int
		words, from = kubeletconf.FlagWords(c.KubeletFlags)
		name = func(i int) string { return fmt.Sprintf("spec.kubelet.flags[%d]", from[i]) }
	}
	args, problems := kubeletconf.CheckArgs(f.KubeletVersion, words, name)
	n.Warnings = append(n.Warnings, args.Warnings...)
	effective, err := kubeletconf.WithFlags(cfg, args.Config)
	if err != nil {
		return "", fmt.Errorf("kubelet config with its flags: %w", err)
	}
	users := kubeletUserConfigs(c, f)
	warnings, configProblems := kubeletconf.CheckConfig(f.KubeletVersion, effective, func(field string) string {
		if args.From[field] != "" {
			return args.From[field]
		}
		return setBy(users, field)
	})
	n.Warnings = append(n.Warnings, warnings...)
	if problems = append(problems, configProblems...); len(problems) > 0 {
		return "", &UsageError{msg: quote.List(problems)}
	}
	if !args.Dropped {
		return c.KubeletExtraArgs, nil
	}
	return unitenv.JoinWords(args.Words), nil // exactly the words kept
}

// containerdNode is containerd's renderer input for Compute: the image's template
// or eksboot's, the pause image n has, the NodeConfig's TOML parts, and the base
// runtime spec when the profile or the NodeConfig has one.
func containerdNode(c *Config, f *Facts, n *Node) containerdconf.Node {
	return containerdconf.Node{
		Config: containerdconf.ContainerdInput{
			Major:         f.ContainerdMajor,
			Minor:         f.ContainerdMinor,
			Template:      f.ContainerdTemplate,
			TemplateName:  f.ContainerdTemplateSource,
			SandboxImage:  n.PauseImage,
			NvidiaRuntime: f.NvidiaRuntime,
			RuncBinary:    f.RuncBinary,
			Overlays:      c.ContainerdOverlays,
			SOCI:          f.SOCI,
		},
		// A NodeConfig that sets one gets it on any image.
		BaseRuntimeSpec:        f.Profile.BaseRuntimeSpec || c.BaseRuntimeSpecOverlay != nil,
		BaseRuntimeSpecOverlay: c.BaseRuntimeSpecOverlay,
		SOCIGzip:               f.SOCIGzip,
		SandboxImageUnit:       f.SandboxImageUnit,
	}
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
	if p.ConfigDir(row) { // the image's drop-ins, and the NodeConfig's, over kubelet-config.json
		args = append(args, "--config-dir="+kubeletconf.ConfigDropInDir)
	}
	if f.Cluster.LocalOutpost {
		// With the unit's --kubeconfig, the client-certificate kubeconfig.
		args = append(args, "--bootstrap-kubeconfig="+kubeletconf.BootstrapKubeconfigPath)
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
