package bootstrap

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/eksboot/eksboot/containerdconf"
	"github.com/eksboot/eksboot/inputcheck"
	"github.com/eksboot/eksboot/internal/lazy"
	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/maxpods"
	"github.com/eksboot/eksboot/unitenv"
)

// Config is a validated bootstrap request: every value parsed into its type, as the
// user asked it (bootstrap.sh's flags or a NodeConfig). Nothing in it needs checking
// again, and nothing writes it once a front end (Validate, FromNodeConfig) has
// returned it: what the node, IMDS and AWS answer is Facts (the cluster that
// discovery finds is Facts.Cluster), and file bytes are made only in Compute. The
// tests hold every run to that: runReadOnly and TestConfigIsReadOnlyOnceValidated
// compare a deep copy taken before Run or ComputeNode with the Config after, for the
// golden cases, discovery (eks:DescribeCluster and its cache), Outposts and the
// scenarios.
type Config struct {
	ClusterName           string
	UseMaxPods            bool
	CA                    []byte // the decoded PEM bundle (nil: discovered, Facts.Cluster)
	APIServerEndpoint     string // "": discovered (Facts.Cluster)
	KubeletExtraArgs      string
	APIRetryAttempts      int
	ContainerdConfigFile  string // node path, "" for the AMI's or the embedded template
	PauseContainerAccount string
	PauseContainerVersion string
	PauseContainerImage   string
	// PauseImageGiven: a pause flag or PAUSE_CONTAINER_IMAGE was given, so the pause
	// image is the user's, not the image profile's.
	PauseImageGiven  bool
	DNSClusterIPs    []string // nil: computed from the service CIDR or the VPC
	IPFamily         string   // "ipv4" or "ipv6"
	ServiceIPv4CIDR  netip.Prefix
	ServiceIPv6CIDR  netip.Prefix
	ClusterID        string
	MountBPFFS       bool
	LocalDisks       string // "" or mount, raid0, raid10, none
	ReservedCPUs     bool   // --reserved-cpus is among the extra args
	ContainerdChosen bool   // --container-runtime containerd was given (needed below 1.24)
	// ContainerdOverlays are partial containerd configurations in TOML (each
	// NodeConfig part's spec.containerd.config), merged onto config.toml in order.
	ContainerdOverlays []containerdconf.ContainerdOverlay
	// BaseRuntimeSpecOverlay is NodeConfig's spec.containerd.baseRuntimeSpec, merged
	// onto the base OCI runtime spec (AL2023 profile).
	BaseRuntimeSpecOverlay map[string]any
	// MaxPodsMode and MaxPodsOptions say how max pods is worked out (maxpods.go);
	// the number is Facts.MaxPods.
	MaxPodsMode    string
	MaxPodsOptions maxpods.Options
	// KubeReservedFromEffective sizes kubeReserved for the max pods the kubelet will
	// run; KubeletMaxPods is the max pods the user gave the kubelet (0: none):
	// --max-pods of the extra args, else NodeConfig's spec.kubelet.config.maxPods.
	KubeReservedFromEffective bool
	KubeletMaxPods            int
	// ShutdownGracePeriod > 0 turns on graceful node shutdown.
	ShutdownGracePeriod             time.Duration
	ShutdownGracePeriodCriticalPods time.Duration
	// KubeletConfigOverlay is a NodeConfig's spec.kubelet.config, checked where it
	// entered (nodeconfig), merged onto the computed kubelet-config.json (empty for
	// bootstrap.sh's command line).
	KubeletConfigOverlay kubeletconf.CheckedOverlay
	// ShutdownGiven: a graceful-shutdown flag was given (or the NodeConfig set the
	// periods), so the kubelet version's default does not apply.
	ShutdownGiven bool
	// IPFamilyGiven: --ip-family or --service-ipv6-cidr (spec.cluster.cidr) was
	// given, so a discovered cluster's IP family does not replace it.
	IPFamilyGiven bool
	// OutpostGiven: --enable-local-outpost (spec.cluster.enableOutpost) was given,
	// so discovery does not replace LocalOutpost.
	OutpostGiven bool
	// LocalOutpost: the cluster is a local cluster on AWS Outposts (the flag or the
	// NodeConfig field; what discovery finds, outpostConfig.outpostArns, is
	// Facts.Cluster.LocalOutpost). The kubelet
	// then joins by TLS bootstrap with a bootstrap kubeconfig whose token names the
	// cluster by ClusterID, and the API server's addresses go into /etc/hosts, so the
	// node keeps working while the Outpost is cut off from its region (outpost.go).
	LocalOutpost bool
	// KubeletFlags are a NodeConfig's spec.kubelet.flags, one kubelet argument each
	// (KubeletExtraArgs is their drop-in value); nil for bootstrap.sh's command line.
	KubeletFlags []string
	// KubeletVerbosityGiven: spec.kubelet.config.logging.verbosity is set, so
	// eksboot's own --v=2 is not passed (a flag would win over the config).
	KubeletVerbosityGiven bool
	// LocalDisksArgs are the arguments of the image's setup-local-disks helper
	// (--local-disks, spec.instance.localStorage); nil: it does not run.
	LocalDisksArgs []string
	// Environment is spec.instance.environment, checked: each key's (default,
	// kubelet, containerd) variables, which Compute renders as the systemd files
	// (the manager's DefaultEnvironment=, kubelet's and containerd's Environment=).
	Environment map[string]map[string]string
	// Nameservers and SearchDomains are spec.instance.network's, checked; Compute
	// renders systemd-resolved's drop-in from them (none when both are empty).
	Nameservers   []string
	SearchDomains []string
	// MaxPodsExpression is spec.kubelet.maxPodsExpression (CEL), checked.
	MaxPodsExpression string
	// NodeNameFromInstanceID: the node is named by its instance ID
	// (spec.featureGates.InstanceIdNodeName), with no ec2:DescribeInstances.
	NodeNameFromInstanceID bool
	// FastImagePull: spec.featureGates.FastImagePull is on; the SOCI snapshotter
	// pulls images when the instance is large enough (Facts.SOCI, soci.go).
	FastImagePull bool
	// Settings are the run's own settings.
	Settings
	// Warnings are things worth saying that do not stop the run.
	Warnings []string
}

var imageRepoRE = lazy.Regexp{Expr: `^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)+$`}

// The names below are checked by hand rather than with regular expressions: a
// bounded repetition such as [a-z]{0,99} compiles into one instruction per
// repetition, and the four of them took about 0.6 ms and 3,300 allocations of
// every start (docs/performance.md).

// isClusterName: 1-100 letters, digits, '-' or '_', starting with a letter or digit.
func isClusterName(s string) bool {
	return isName(s, 100, isAlnum, func(c byte) bool { return isAlnum(c) || c == '-' || c == '_' })
}

// isClusterID: a local cluster's ID (EKS gives a UUID), by the cluster name's
// grammar: it reaches the kubeconfig's token arguments.
func isClusterID(s string) bool { return isClusterName(s) }

// isAccountID: 12 digits.
func isAccountID(s string) bool {
	return len(s) == 12 && isName(s, 12, isDigit, isDigit)
}

// isImageTag: 1-128 letters, digits, '_', '.' or '-', not starting with '.' or '-'.
func isImageTag(s string) bool {
	return isName(s, 128, func(c byte) bool { return isAlnum(c) || c == '_' },
		func(c byte) bool { return isAlnum(c) || c == '_' || c == '.' || c == '-' })
}

// isDNSLabel: 1-63 letters, digits or '-', starting and ending with a letter or digit.
func isDNSLabel(s string) bool {
	return isName(s, 63, isAlnum, func(c byte) bool { return isAlnum(c) || c == '-' }) && isAlnum(s[len(s)-1])
}

// isName reports whether s has 1 to maxLen bytes, the first one first, the others rest.
func isName(s string, maxLen int, first, rest func(byte) bool) bool {
	if len(s) == 0 || len(s) > maxLen || !first(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !rest(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isAlnum(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// Validate checks every option and returns the typed configuration. All problems are
// reported together, each naming its flag and what is allowed, as one UsageError.
func Validate(o Options) (*Config, error) { return validate(o, nil) }

// ValidateWith is Validate for a run whose settings are s, not those of o (eksboot
// render's simulated bootstrap.sh calls); o's own are still checked.
func ValidateWith(o Options, s Settings) (*Config, error) { return validate(o, &s) }

func validate(o Options, s *Settings) (*Config, error) {
	c := &Config{
		ClusterName:           o.ClusterName,
		KubeletExtraArgs:      o.KubeletExtraArgs,
		ContainerdConfigFile:  o.ContainerdConfigFile,
		PauseContainerAccount: o.PauseContainerAccount,
		PauseContainerVersion: o.PauseContainerVersion,
		PauseContainerImage:   o.PauseContainerImage,
		ClusterID:             o.ClusterID,
		LocalDisks:            o.LocalDisks,
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	c.Settings = settingsFrom(o, needsDiscovery(o.B64ClusterCA == "", o.APIServerEndpoint == ""), bad)
	if s != nil {
		c.Settings = *s
	}
	c.OutpostGiven = o.EnableLocalOutpost != ""
	c.IPFamilyGiven = o.IPFamily != "" || o.ServiceIPv6CIDR != ""

	checkFlagText(o, bad)
	c.checkCluster(o, bad)
	c.checkRuntime(o, bad)
	c.checkNetwork(o, bad)

	switch o.LocalDisks {
	case "", "none":
	case "mount", "raid0", "raid10":
		c.LocalDisksArgs = []string{o.LocalDisks}
	default:
		bad("--local-disks %s: want mount, raid0, raid10 or none", quote.Value(o.LocalDisks))
	}
	for _, p := range c.setMaxPods(maxPodsInput{
		Mode: o.MaxPodsMode, CustomNetworking: o.MaxPodsCustomNetworking, SecurityGroupsForPods: o.MaxPodsSecurityGroupsForPods,
		MaxENI: o.MaxPodsMaxENI, Uncapped: o.MaxPodsUncapped, KubeReservedFromEffective: o.KubeReservedFromEffectiveMaxPods,
		ExtraArgs: unitenv.SplitWords(o.KubeletExtraArgs), names: maxPodsFlagNames,
	}) {
		bad("%s", p)
	}
	for _, p := range c.shutdown(o) {
		bad("%s", p)
	}
	if len(problems) > 0 {
		return nil, &UsageError{msg: quote.List(problems)}
	}
	return c, nil
}

// textOnlyFlags are the bootstrap.sh flags whose values no grammar of their own
// checks for control characters: true/false words (anything else is false, as in
// bootstrap.sh, with a warning that quotes it), a path that is only read, an ID.
// The other flags' grammars refuse them (names, URLs, addresses, numbers) or say
// where (--kubelet-extra-args); --b64-cluster-ca may be wrapped and
// --docker-config-json is ignored.
var textOnlyFlags = []string{"use-max-pods", "enable-docker-bridge", "enable-local-outpost", "mount-bpf-fs", "containerd-config-file", "cluster-id"}

// checkFlagText refuses a control character in the value of a textOnlyFlags flag,
// for Validate: no value eksboot takes may hold one.
func checkFlagText(o Options, bad func(string, ...any)) {
	for _, f := range scriptFlags {
		if !slices.Contains(textOnlyFlags, f.Name) {
			continue
		}
		if err := inputcheck.CheckText(*f.Field(&o), false); err != nil {
			bad("--%s: %v", f.Name, err)
		}
	}
}

// checkCluster checks the cluster's name, CA and endpoint, bootstrap.sh's true/false
// flags, the kubelet extra arguments and the API retry count, for Validate.
func (c *Config) checkCluster(o Options, bad func(string, ...any)) {
	if o.ClusterName == "" {
		bad("CLUSTER_NAME is missing: give the cluster name as the argument after the flags")
	} else if !isClusterName(o.ClusterName) {
		bad("CLUSTER_NAME %s is not a cluster name: 1-100 letters, digits, '-' or '_', starting with a letter or digit", quote.Value(o.ClusterName))
	}
	c.UseMaxPods = c.flagBool("--use-max-pods", o.UseMaxPods, true)
	c.MountBPFFS = c.flagBool("--mount-bpf-fs", o.MountBPFFS, true)
	c.LocalOutpost = c.flagBool("--enable-local-outpost", o.EnableLocalOutpost, false)
	if o.ClusterID != "" && !isClusterID(o.ClusterID) {
		bad("--cluster-id %s is not a cluster ID: 1-100 letters, digits, '-' or '_', starting with a letter or digit (a local cluster's ID, such as 51eaebb5-7e52-4e71-baba-e98a6314b10e)", quote.Value(o.ClusterID))
	}
	if c.LocalOutpost && o.ClusterID == "" && !needsDiscovery(o.B64ClusterCA == "", o.APIServerEndpoint == "") {
		// With discovery the ID comes from eks:DescribeCluster (checked there).
		bad("--enable-local-outpost true needs --cluster-id: the kubelet's bootstrap token names a local cluster by its ID (or leave out --b64-cluster-ca or --apiserver-endpoint to look it up)")
	}
	if c.flagBool("--enable-docker-bridge", o.EnableDockerBridge, false) {
		c.Warnings = append(c.Warnings, "--enable-docker-bridge was set but is ignored: it applies to dockerd, and containerd is the runtime")
	}
	if o.DockerConfigJSON != "" {
		c.Warnings = append(c.Warnings, "--docker-config-json was set but is ignored: it applies to dockerd, and containerd is the runtime")
	}

	// A missing CA or endpoint is looked up with eks:DescribeCluster (discover.go).
	if o.B64ClusterCA != "" {
		var err error
		if c.CA, err = decodeCA(o.B64ClusterCA); err != nil {
			bad("--b64-cluster-ca: %v", err)
		}
	}
	if o.APIServerEndpoint != "" {
		if err := checkEndpoint(o.APIServerEndpoint); err != nil {
			bad("--apiserver-endpoint %s: %v; want an https URL such as https://0123ABCD.gr7.us-west-2.eks.amazonaws.com", quote.Value(o.APIServerEndpoint), err)
		} else {
			c.APIServerEndpoint = o.APIServerEndpoint
		}
	}
	if err := checkArgs(o.KubeletExtraArgs); err != nil {
		bad("--kubelet-extra-args: %v", err)
	}
	_, c.ReservedCPUs = kubeletconf.FindArg(unitenv.SplitWords(o.KubeletExtraArgs), "reserved-cpus")

	c.APIRetryAttempts = DefaultAPIRetryAttempts
	if o.APIRetryAttempts != "" {
		n, err := strconv.Atoi(o.APIRetryAttempts)
		if err != nil || n < 0 || n > 100 {
			bad("--aws-api-retry-attempts %s: want a whole number from 0 to 100", quote.Value(o.APIRetryAttempts))
		}
		c.APIRetryAttempts = n
	}
}

// checkRuntime checks containerd's and the pause image's flags, for Validate.
func (c *Config) checkRuntime(o Options, bad func(string, ...any)) {
	if o.ContainerdConfigFile != "" && !strings.HasPrefix(o.ContainerdConfigFile, "/") {
		bad("--containerd-config-file %s: want an absolute path", quote.Value(o.ContainerdConfigFile))
	}
	if o.PauseContainerAccount != "" && !isAccountID(o.PauseContainerAccount) {
		bad("--pause-container-account %s: want a 12-digit AWS account ID", quote.Value(o.PauseContainerAccount))
	}
	if c.PauseContainerVersion == "" {
		c.PauseContainerVersion = DefaultPauseContainerVersion
	} else if !isImageTag(c.PauseContainerVersion) {
		bad("--pause-container-version %s: want an image tag (letters, digits, '.', '_', '-'; at most 128)", quote.Value(o.PauseContainerVersion))
	}
	c.PauseImageGiven = o.PauseContainerAccount != "" || o.PauseContainerVersion != "" || o.PauseContainerImage != ""
	if o.PauseContainerImage != "" && !imageRepoRE.Get().MatchString(o.PauseContainerImage) {
		bad("PAUSE_CONTAINER_IMAGE %s: want an image repository without a tag, such as registry.example.com/eks/pause", quote.Value(o.PauseContainerImage))
	}

	c.ContainerdChosen = o.ContainerRuntime == "containerd"
	switch rt := o.ContainerRuntime; rt {
	case "", "containerd":
	case "dockerd":
		bad("--container-runtime dockerd: containerd is the only supported container runtime as of Kubernetes 1.24")
	default:
		bad("--container-runtime %s: want containerd", quote.Value(rt))
	}
}

// checkNetwork checks the cluster DNS addresses, the IP family and the service
// CIDRs, and sets c.IPFamily, for Validate.
func (c *Config) checkNetwork(o Options, bad func(string, ...any)) {
	if o.DNSClusterIP != "" {
		for _, ip := range strings.Split(o.DNSClusterIP, ",") {
			if _, err := netip.ParseAddr(ip); err != nil || strings.Contains(ip, "%") {
				bad("--dns-cluster-ip %s: %s is not an IP address; want one or more IP addresses separated by commas", quote.Value(o.DNSClusterIP), quote.Value(ip))
				break
			}
			c.DNSClusterIPs = append(c.DNSClusterIPs, ip)
		}
	}
	family := strings.ToLower(o.IPFamily)
	switch family {
	case "", "ipv4", "ipv6":
	default:
		bad("--ip-family %s: want ipv4 or ipv6", quote.Value(o.IPFamily))
	}
	if o.ServiceIPv4CIDR != "" {
		if p, err := netip.ParsePrefix(o.ServiceIPv4CIDR); err != nil || !p.Addr().Is4() {
			bad("--service-ipv4-cidr %s: want an IPv4 CIDR such as 10.100.0.0/16", quote.Value(o.ServiceIPv4CIDR))
		} else {
			c.ServiceIPv4CIDR = p.Masked()
		}
	}
	if o.ServiceIPv6CIDR != "" {
		if p, err := netip.ParsePrefix(o.ServiceIPv6CIDR); err != nil || !p.Addr().Is6() || p.Addr().Is4In6() {
			bad("--service-ipv6-cidr %s: want an IPv6 CIDR such as fd00:10:96::/112", quote.Value(o.ServiceIPv6CIDR))
		} else {
			c.ServiceIPv6CIDR = p.Masked()
		}
		if family == "ipv4" {
			bad("--service-ipv6-cidr with --ip-family ipv4: the IPv6 service CIDR needs --ip-family ipv6 (or no --ip-family)")
		}
		family = "ipv6"
	}
	if family == "" {
		family = "ipv4"
	}
	c.IPFamily = family
	if family == "ipv6" && o.ServiceIPv6CIDR == "" && o.DNSClusterIP == "" && !needsDiscovery(o.B64ClusterCA == "", o.APIServerEndpoint == "") {
		bad("--ip-family ipv6 needs --service-ipv6-cidr or --dns-cluster-ip to set the cluster DNS address")
	}
}

// flagBool reads one of bootstrap.sh's true/false flags as bootstrap.sh does: only the
// exact word "true" is true, "" gives def, and anything else is false. A value other
// than "true" or "false" (such as TRUE or yes) gets a warning, since it is almost
// certainly a typo that bootstrap.sh silently took as false.
func (c *Config) flagBool(flag, value string, def bool) bool {
	switch value {
	case "":
		return def
	case "true":
		return true
	case "false":
		return false
	}
	c.Warnings = append(c.Warnings, fmt.Sprintf("%s %s is taken as false: only \"true\" turns it on (as in bootstrap.sh)", flag, quote.Value(value)))
	return false
}
