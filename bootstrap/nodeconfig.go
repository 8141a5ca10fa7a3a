package bootstrap

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/eksboot/eksboot/rootfs"
	"github.com/eksboot/eksboot/userdata"
)

// Extra is what a run from a NodeConfig adds to bootstrap.sh's options.
type Extra struct {
	// KubeletConfig is merged onto the computed kubelet-config.json (a partial
	// KubeletConfiguration, strictly checked against the upstream type).
	KubeletConfig map[string]any
	// ContainerdConfig is spec.containerd.config: partial containerd TOML merged onto
	// the node's config.toml.
	ContainerdConfig string
	// BaseRuntimeSpec is spec.containerd.baseRuntimeSpec, merged onto the base OCI
	// runtime spec (an image profile that writes one: AL2023).
	BaseRuntimeSpec map[string]any
	// RestartAll restarts containerd and kubelet even when no file changed: the run
	// phase after a config phase that already wrote the files.
	RestartAll bool
}

// apply puts the extras into the validated configuration. A maxPods in the kubelet
// config counts as the user's max pods for --kube-reserved-from-effective-max-pods
// (spec.maxPods.kubeReservedFromEffectiveMaxPods), unless a --max-pods flag, which
// the kubelet prefers, is among kubelet.flags.
func (x *Extra) apply(c *Config) {
	if x == nil {
		return
	}
	c.KubeletConfigOverlay = x.KubeletConfig
	c.ContainerdOverlay = x.ContainerdConfig
	c.BaseRuntimeSpecOverlay = x.BaseRuntimeSpec
	if n, ok := x.KubeletConfig["maxPods"].(float64); ok && n > 0 && c.ExtraArgsMaxPods == 0 {
		c.ExtraArgsMaxPods = int(n)
	}
}

// RunNodeConfig is Run for a node configured by NodeConfig: the same checklist, with
// the options from NodeConfigOptions and the extras.
func RunNodeConfig(ctx context.Context, o Options, x Extra, env *Env) error {
	return run(ctx, o, &x, env)
}

// NodeConfigOptions maps a merged, validated NodeConfig onto base (eksboot's own
// options: root, timeouts, ...): the cluster to bootstrap.sh's flags, spec.maxPods to
// the --max-pods-* flags, kubelet.flags to --kubelet-extra-args, and the rest of
// kubelet.config to the returned kubelet config overlay. Fields eksboot cannot honour
// yet are errors naming them, all at once.
func NodeConfigOptions(nc *userdata.NodeConfig, base Options) (Options, Extra, error) {
	o := base
	var x Extra
	var errs userdata.Errors
	unsupported := func(field string) {
		errs = append(errs, field+": not supported by eksboot yet (see docs/compat.md)")
	}
	s := nc.Spec
	o.ClusterName = s.Cluster.Name
	o.APIServerEndpoint = s.Cluster.APIServerEndpoint
	o.B64ClusterCA = s.Cluster.CertificateAuthority
	o.ClusterID = s.Cluster.ID
	if s.Cluster.EnableOutpost != nil && *s.Cluster.EnableOutpost {
		unsupported("spec.cluster.enableOutpost")
	}
	if p, err := netip.ParsePrefix(s.Cluster.CIDR); err == nil && p.Addr().Is6() {
		o.ServiceIPv6CIDR, o.IPFamily = s.Cluster.CIDR, "ipv6"
	} else {
		o.ServiceIPv4CIDR = s.Cluster.CIDR
	}

	x.ContainerdConfig = s.Containerd.Config
	x.BaseRuntimeSpec = s.Containerd.BaseRuntimeSpec
	switch ls := s.Instance.LocalStorage; ls.Strategy {
	case "":
	case "RAID0", "RAID10", "Mount":
		o.LocalDisks = strings.ToLower(ls.Strategy)
	default:
		errs = append(errs, fmt.Sprintf("spec.instance.localStorage.strategy: %q, want RAID0, RAID10 or Mount", ls.Strategy))
	}
	if s.Instance.LocalStorage.MountPath != "" {
		unsupported("spec.instance.localStorage.mountPath")
	}
	if len(s.Instance.LocalStorage.DisabledMounts) > 0 {
		unsupported("spec.instance.localStorage.disabledMounts")
	}
	if len(s.Instance.Environment) > 0 {
		unsupported("spec.instance.environment")
	}
	if len(s.Instance.Network.Nameservers) > 0 || len(s.Instance.Network.Domains) > 0 {
		unsupported("spec.instance.network")
	}
	for _, k := range slices.Sorted(maps.Keys(s.FeatureGates)) {
		if s.FeatureGates[k] {
			unsupported("spec.featureGates." + k)
		}
	}
	if s.Kubelet.MaxPodsExpression != "" {
		errs = append(errs, "spec.kubelet.maxPodsExpression: not supported by eksboot; use spec.maxPods (mode, customNetworking, securityGroupsForPods, maxENI, uncapped) or kubelet.config.maxPods")
	}

	mp := s.MaxPods
	if mp.Mode != "" {
		o.MaxPodsMode = mp.Mode
	}
	o.MaxPodsCustomNetworking = val(mp.CustomNetworking, o.MaxPodsCustomNetworking)
	o.MaxPodsSecurityGroupsForPods = val(mp.SecurityGroupsForPods, o.MaxPodsSecurityGroupsForPods)
	o.MaxPodsMaxENI = val(mp.MaxENI, o.MaxPodsMaxENI)
	o.MaxPodsUncapped = val(mp.Uncapped, o.MaxPodsUncapped)
	o.KubeReservedFromEffectiveMaxPods = val(mp.KubeReservedFromEffectiveMaxPods, o.KubeReservedFromEffectiveMaxPods)

	o.KubeletExtraArgs = joinFlags(s.Kubelet.Flags)
	x.KubeletConfig = map[string]any{}
	for k, v := range s.Kubelet.Config {
		x.KubeletConfig[k] = v
	}
	if dns, ok := x.KubeletConfig["clusterDNS"].([]any); ok {
		var ips []string
		for _, ip := range dns {
			ips = append(ips, fmt.Sprint(ip))
		}
		o.DNSClusterIP = strings.Join(ips, ",")
		delete(x.KubeletConfig, "clusterDNS")
	}
	if len(errs) > 0 {
		return o, x, errs
	}
	return o, x, nil
}

func val[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// joinFlags joins kubelet.flags into one KUBELET_EXTRA_ARGS value, which systemd
// splits at whitespace, removing one level of double quotes: a flag with whitespace
// in it is double-quoted whole, so it stays one argument.
func joinFlags(flags []string) string {
	out := make([]string, 0, len(flags))
	for _, f := range flags {
		if strings.ContainsAny(f, " \t") && !strings.Contains(f, `"`) {
			f = strconv.Quote(f)
		}
		out = append(out, f)
	}
	return strings.Join(out, " ")
}

// allChanged lists every file of n as changed, so Actions restarts every unit.
func allChanged(n *Node) []rootfs.Change {
	out := make([]rootfs.Change, 0, len(n.Files))
	for _, f := range n.Files {
		out = append(out, rootfs.Change{Path: f.Path, New: f.Data})
	}
	return out
}

// nodeConfigNames maps the flags in Validate's messages to the NodeConfig fields that
// set them.
var nodeConfigNames = strings.NewReplacer(
	"CLUSTER_NAME", "spec.cluster.name",
	"--b64-cluster-ca", "spec.cluster.certificateAuthority",
	"--apiserver-endpoint", "spec.cluster.apiServerEndpoint",
	"--service-ipv4-cidr", "spec.cluster.cidr",
	"--service-ipv6-cidr", "spec.cluster.cidr",
	"--dns-cluster-ip", "spec.kubelet.config.clusterDNS",
	"--kubelet-extra-args", "spec.kubelet.flags",
	"--local-disks", "spec.instance.localStorage.strategy",
	"--max-pods-mode", "spec.maxPods.mode",
	"--max-pods-max-eni", "spec.maxPods.maxENI",
	"--max-pods-custom-networking", "spec.maxPods.customNetworking",
	"--max-pods-security-groups-for-pods", "spec.maxPods.securityGroupsForPods",
	"--max-pods-uncapped", "spec.maxPods.uncapped",
)

// NodeConfigMessage rewrites an error of a run from NodeConfigOptions so that it
// names the NodeConfig fields rather than bootstrap.sh's flags.
func NodeConfigMessage(err error) string {
	return nodeConfigNames.Replace(strings.ReplaceAll(err.Error(), "\n", " "))
}
