package bootstrap

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/eksboot/eksboot/containerdconf"
	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/maxpods/expr"
	"github.com/eksboot/eksboot/nodeconfig"
	"github.com/eksboot/eksboot/nodesys"
)

// FromNodeConfig is the NodeConfig front end: it turns a merged NodeConfig
// (node.eks.aws/v1alpha1, nodeconfig.DecodeAndMerge) and the run's settings into the
// typed, validated configuration that Run takes, the same Config Validate gives for
// bootstrap.sh's command line. Values go straight into their types; nothing becomes a
// flag string to be parsed again. Every problem is reported at once, each naming its
// spec.* field, as one UsageError. Fields eksboot cannot honour are rejected by name.
func FromNodeConfig(nc *nodeconfig.NodeConfig, s Settings) (*Config, error) {
	c := &Config{
		Settings:              s,
		UseMaxPods:            true,
		MountBPFFS:            true,
		APIRetryAttempts:      DefaultAPIRetryAttempts,
		PauseContainerVersion: DefaultPauseContainerVersion,
		ContainerdChosen:      true, // a NodeConfig node runs containerd
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	unsupported := func(field string) { bad("%s: not supported by eksboot yet (see docs/compat.md)", field) }
	sp := nc.Spec
	c.fromCluster(sp.Cluster, bad)
	fields := c.fromKubelet(sp.Kubelet, bad)
	c.fromMaxPods(sp.MaxPods, fields, bad)
	c.fromInstance(sp, bad, unsupported)
	if len(problems) > 0 {
		return nil, &UsageError{msg: quote.List(problems)}
	}
	return c, nil
}

// fromCluster reads spec.cluster, for FromNodeConfig.
func (c *Config) fromCluster(cl nodeconfig.Cluster, bad func(string, ...any)) {
	c.ClusterName, c.ClusterID = cl.Name, cl.ID
	if cl.Name == "" {
		bad("spec.cluster.name: required field missing")
	} else if !isClusterName(cl.Name) {
		bad("spec.cluster.name %s is not a cluster name: 1-100 letters, digits, '-' or '_', starting with a letter or digit", quote.Value(cl.Name))
	}
	if cl.EnableOutpost != nil {
		c.OutpostGiven, c.LocalOutpost = true, *cl.EnableOutpost
	}
	switch {
	case cl.ID != "" && !isClusterID(cl.ID):
		bad("spec.cluster.id %s is not a cluster ID: 1-100 letters, digits, '-' or '_', starting with a letter or digit (a local cluster's ID, such as 51eaebb5-7e52-4e71-baba-e98a6314b10e)", quote.Value(cl.ID))
	case c.LocalOutpost && cl.ID == "":
		// nodeadm's validation: "cluster ID must be provided for outposts".
		bad("spec.cluster.id: required when spec.cluster.enableOutpost is true (the kubelet's bootstrap token names a local cluster by its ID)")
	}
	if cl.CertificateAuthority != "" {
		var err error
		if c.CA, err = decodeCA(cl.CertificateAuthority); err != nil {
			bad("spec.cluster.certificateAuthority: %v", err)
		}
	}
	if cl.APIServerEndpoint != "" {
		if err := checkEndpoint(cl.APIServerEndpoint); err != nil {
			bad("spec.cluster.apiServerEndpoint %s: %v; want an https URL such as https://0123ABCD.gr7.us-west-2.eks.amazonaws.com", quote.Value(cl.APIServerEndpoint), err)
		} else {
			c.APIServerEndpoint = cl.APIServerEndpoint
		}
	}
	c.IPFamily = "ipv4"
	if cl.CIDR != "" {
		switch p, err := netip.ParsePrefix(cl.CIDR); {
		case err != nil || p.Addr().Is4In6():
			bad("spec.cluster.cidr %s: want the cluster's service CIDR, such as 10.100.0.0/16 or fd00:10:96::/112", quote.Value(cl.CIDR))
		case p.Addr().Is6():
			c.ServiceIPv6CIDR, c.IPFamily, c.IPFamilyGiven = p.Masked(), "ipv6", true
		default:
			c.ServiceIPv4CIDR = p.Masked()
		}
	}
}

// fromKubelet reads spec.kubelet: the flags, one argument each, the partial
// configuration (checked where it entered, nodeconfig's decoding; its fields are
// returned) and the max pods expression, for FromNodeConfig.
func (c *Config) fromKubelet(kl nodeconfig.Kubelet, bad func(string, ...any)) kubeletconf.OverlayFields {
	c.KubeletFlags = slices.Clone(kl.Flags)
	for i, f := range c.KubeletFlags {
		if err := checkArgs(f); err != nil {
			bad("spec.kubelet.flags[%d]: %v", i, err)
		}
	}
	c.KubeletExtraArgs = kubeletconf.JoinArgs(c.KubeletFlags)
	if len(c.KubeletExtraArgs) > maxExtraArgs {
		bad("spec.kubelet.flags: %d bytes is more than the %d allowed", len(c.KubeletExtraArgs), maxExtraArgs)
	}
	_, c.ReservedCPUs = kubeletconf.FindArg(c.KubeletFlags, "reserved-cpus")
	// spec.kubelet.config, checked against the kubelet's type where it entered
	// (nodeconfig's decoding made kl.Config).
	fields := kl.Config.Fields()
	if kl.Config.Len() > 0 {
		c.KubeletConfigOverlay = kl.Config
		if fields.ClusterDNS != nil {
			// Cluster DNS is computed (from the service CIDR) unless given: the given
			// list is the node's, checked like --dns-cluster-ip.
			for i, ip := range fields.ClusterDNS {
				if a, err := netip.ParseAddr(ip); err != nil || a.Zone() != "" {
					bad("spec.kubelet.config.clusterDNS[%d] %s: want an IP address", i, quote.Value(ip))
				}
			}
			c.DNSClusterIPs = fields.ClusterDNS
			c.KubeletConfigOverlay = kl.Config.Without("clusterDNS")
		}
		c.KubeletVerbosityGiven = fields.VerbosityGiven
	}
	if c.IPFamily == "ipv6" && !c.ServiceIPv6CIDR.IsValid() && len(c.DNSClusterIPs) == 0 {
		bad("an IPv6 cluster needs spec.cluster.cidr or spec.kubelet.config.clusterDNS to set the cluster DNS address")
	}
	if e := kl.MaxPodsExpression; e != "" {
		if err := expr.Check(e); err != nil {
			bad("%v", err) // names spec.kubelet.maxPodsExpression
		}
		c.MaxPodsExpression = e
	}
	return fields
}

// fromMaxPods reads spec.maxPods, eksboot's own field (how max pods is worked out),
// and a maxPods of spec.kubelet.config, for FromNodeConfig.
func (c *Config) fromMaxPods(mp nodeconfig.MaxPods, fields kubeletconf.OverlayFields, bad func(string, ...any)) {
	in := maxPodsInput{
		Mode:                      cmp.Or(mp.Mode, modeENIMaxPods),
		CustomNetworking:          val(mp.CustomNetworking, false),
		SecurityGroupsForPods:     val(mp.SecurityGroupsForPods, false),
		MaxENI:                    val(mp.MaxENI, 0),
		Uncapped:                  val(mp.Uncapped, false),
		KubeReservedFromEffective: val(mp.KubeReservedFromEffectiveMaxPods, false),
		ExtraArgs:                 c.KubeletFlags,
		names:                     maxPodsNodeConfigNames,
	}
	for _, p := range c.setMaxPods(in) {
		bad("%s", p)
	}
	if c.KubeletMaxPods == 0 {
		// A maxPods in the kubelet config is what the kubelet runs with, unless a
		// --max-pods flag, which the kubelet prefers, is among the flags.
		if fields.MaxPods > 0 {
			c.KubeletMaxPods = int(fields.MaxPods)
		}
	}
}

// fromInstance reads spec.containerd, spec.instance and spec.featureGates, for
// FromNodeConfig.
func (c *Config) fromInstance(sp nodeconfig.Spec, bad func(string, ...any), unsupported func(string)) {
	// spec.containerd: each part's TOML merged in order, and the base runtime spec.
	for _, toml := range sp.Containerd.Configs {
		c.ContainerdOverlays = append(c.ContainerdOverlays, containerdconf.ContainerdOverlay{Name: "spec.containerd.config", TOML: toml})
	}
	if len(sp.Containerd.Configs) == 0 && sp.Containerd.Config != "" {
		c.ContainerdOverlays = []containerdconf.ContainerdOverlay{{Name: "spec.containerd.config", TOML: sp.Containerd.Config}}
	}
	for _, o := range c.ContainerdOverlays {
		if err := containerdconf.CheckContainerdOverlay(o.Name, o.TOML); err != nil {
			bad("%v", err) // names spec.containerd.config
		}
	}
	c.BaseRuntimeSpecOverlay = sp.Containerd.BaseRuntimeSpec

	// spec.instance.
	var err error
	c.LocalDisks = strings.ToLower(sp.Instance.LocalStorage.Strategy)
	if ls := sp.Instance.LocalStorage; ls.Strategy != "" {
		if c.LocalDisksArgs, err = nodesys.LocalDisksArgs(ls.Strategy, ls.MountPath, ls.DisabledMounts); err != nil {
			bad("%v", err) // names spec.instance.localStorage.*
		}
	}
	// Checked here by the renderers' own rules (every problem, named); the files
	// are made in Compute from the typed values.
	if _, err := nodesys.InstanceEnvironment(sp.Instance.Environment); err != nil {
		bad("%v", err) // names spec.instance.environment.<unit>.<NAME>
	}
	for k, vars := range sp.Instance.Environment {
		if c.Environment == nil {
			c.Environment = map[string]map[string]string{}
		}
		c.Environment[k] = maps.Clone(vars)
	}
	nw := sp.Instance.Network
	if _, err := nodesys.ResolvedConfig(nw.Nameservers, nw.Domains); err != nil {
		bad("%v", err) // names spec.instance.network.*
	}
	c.Nameservers, c.SearchDomains = slices.Clone(nw.Nameservers), slices.Clone(nw.Domains)
	for _, k := range slices.Sorted(maps.Keys(sp.FeatureGates)) {
		switch on := sp.FeatureGates[k]; {
		case !kubeletconf.KnownFeatureGate(k):
			bad("spec.featureGates.%s: no such feature gate (eksboot knows %s)", quote.Name(k), strings.Join(knownGates(), ", "))
		case !on: // off is every gate's default
		case k == "InstanceIdNodeName":
			c.NodeNameFromInstanceID = true
		case k == "FastImagePull":
			c.FastImagePull = true
		default:
			unsupported("spec.featureGates." + k)
		}
	}
}

// knownGates lists the feature gates' names.
func knownGates() []string {
	var out []string
	for _, g := range kubeletconf.FeatureGates {
		out = append(out, g.Name)
	}
	return out
}

func val[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
