// Package bootstrap joins an EC2 instance to an EKS cluster, as /etc/eks/bootstrap.sh
// does: it parses bootstrap.sh's command line, reads the instance's facts, computes the
// kubelet's configuration, writes it under the root and restarts the units through
// systemd. Run is the checklist; each step lives in its own file.
//
// Its rooms: the two front ends that make the one typed Config, FromFlags
// (options.go: Parse, SettingsFlags and DefaultSettings, the flags and defaults;
// validate.go) and FromNodeConfig (nodeconfig.go; request.go merges a user data's
// NodeConfigs for init and render); the facts (facts.go, gatherFacts, the only
// reader of IMDS, EC2, EKS, DNS and node files, through Env); the pure computation
// of the node (plan.go, Compute, with ComputeNode running the facts first); the run
// (run.go: lock, facts, compute, diff, write, restart, each step heard by
// Env.OnStep); and Actions (actions.go), the systemd operations the changes need.
// The NodeConfig API itself is package nodeconfig, user data's bytes are package
// userdata, and `eksboot render`'s offline run is package render.
package bootstrap

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/eksboot/eksboot/internal/flaghelp"
	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/kubeletconf"
)

// Options are the inputs of one bootstrap run: bootstrap.sh's flags (with their
// environment-variable fallbacks) and eksboot's own.
type Options struct {
	// ClusterName is the first positional argument.
	ClusterName string

	// bootstrap.sh's flags, as given (validated by Validate).
	UseMaxPods            string // --use-max-pods / USE_MAX_PODS: "true" or "false"
	B64ClusterCA          string // --b64-cluster-ca / B64_CLUSTER_CA
	APIServerEndpoint     string // --apiserver-endpoint / APISERVER_ENDPOINT
	KubeletExtraArgs      string // --kubelet-extra-args / KUBELET_EXTRA_ARGS
	EnableDockerBridge    string // --enable-docker-bridge / ENABLE_DOCKER_BRIDGE (dockerd only: ignored)
	APIRetryAttempts      string // --aws-api-retry-attempts / API_RETRY_ATTEMPTS
	DockerConfigJSON      string // --docker-config-json / DOCKER_CONFIG_JSON (dockerd only: ignored)
	ContainerdConfigFile  string // --containerd-config-file / CONTAINERD_CONFIG_FILE
	PauseContainerAccount string // --pause-container-account / PAUSE_CONTAINER_ACCOUNT
	PauseContainerVersion string // --pause-container-version / PAUSE_CONTAINER_VERSION
	PauseContainerImage   string // PAUSE_CONTAINER_IMAGE (environment only)
	DNSClusterIP          string // --dns-cluster-ip / DNS_CLUSTER_IP
	ContainerRuntime      string // --container-runtime / CONTAINER_RUNTIME
	IPFamily              string // --ip-family / IP_FAMILY
	ServiceIPv6CIDR       string // --service-ipv6-cidr / SERVICE_IPV6_CIDR
	ServiceIPv4CIDR       string // --service-ipv4-cidr / SERVICE_IPV4_CIDR
	EnableLocalOutpost    string // --enable-local-outpost / ENABLE_LOCAL_OUTPOST
	ClusterID             string // --cluster-id / CLUSTER_ID
	MountBPFFS            string // --mount-bpf-fs / MOUNT_BPF_FS
	LocalDisks            string // --local-disks / LOCAL_DISKS

	// eksboot's own flags.
	Root           string        // --root: the directory that stands for "/"
	DryRun         bool          // --dry-run: print the changes, write nothing
	NoRestart      bool          // --no-restart: write, but leave systemd alone
	IMDSEndpoint   string        // --imds-endpoint (resolved with the environment later)
	KubeletVersion string        // --kubelet-version
	ImageProfile   string        // --image-profile: al2, al2023, or "" to detect it from the root
	LogFormat      string        // --log-format: console, json or journal
	IMDSTimeout    time.Duration // --imds-timeout
	IMDSv1Fallback bool          // --imds-v1-fallback: read IMDS without a token when it refuses one
	SystemdTimeout time.Duration // --systemd-timeout
	Help           bool          // -h, --help

	// DiscoveryTimeout (--discovery-timeout) bounds the look-up of the cluster with
	// eks:DescribeCluster when --b64-cluster-ca or --apiserver-endpoint is missing.
	DiscoveryTimeout time.Duration

	// Graceful node shutdown (off by default, as in bootstrap.sh).
	GracefulShutdown                bool          // --graceful-shutdown: on, with DefaultShutdownGracePeriod(CriticalPods)
	ShutdownGracePeriod             time.Duration // --shutdown-grace-period
	ShutdownGracePeriodCriticalPods time.Duration // --shutdown-grace-period-critical-pods
	shutdownFlagsSet                map[string]bool

	// Max pods (maxpods.go); the default is bootstrap.sh's eni-max-pods.txt number.
	MaxPodsMode                      string // --max-pods-mode
	MaxPodsCustomNetworking          bool   // --max-pods-custom-networking
	MaxPodsSecurityGroupsForPods     bool   // --max-pods-security-groups-for-pods
	MaxPodsMaxENI                    int    // --max-pods-max-eni
	MaxPodsUncapped                  bool   // --max-pods-uncapped
	KubeReservedFromEffectiveMaxPods bool   // --kube-reserved-from-effective-max-pods
}

// Settings are a run's own settings, eksboot's flags that neither bootstrap.sh's
// command line nor a NodeConfig has: the same for both front ends. They are checked by
// Check and carried in the Config.
type Settings struct {
	Root             string        // --root: the directory that stands for "/"
	DryRun           bool          // --dry-run: print the changes, write nothing
	NoRestart        bool          // --no-restart: write, but leave systemd alone
	IMDSEndpoint     string        // --imds-endpoint (resolved with the environment later)
	IMDSTimeout      time.Duration // --imds-timeout
	IMDSv1Fallback   bool          // --imds-v1-fallback
	SystemdTimeout   time.Duration // --systemd-timeout
	DiscoveryTimeout time.Duration // --discovery-timeout
	LogFormat        string        // --log-format: console, json or journal
	// KubeletVersion is --kubelet-version, parsed (zero: read from the image).
	KubeletVersion kubeletconf.Version
	// ImageProfile is --image-profile ("": detect it from the root).
	ImageProfile string
	// ReloadOnly: of the systemd actions, only daemon-reload (init's config phase:
	// the units that start later, containerd and the kubelet among them, must see the
	// unit files and drop-ins it wrote; nothing is started or restarted).
	ReloadOnly bool
}

// Defaults written once: the flags' defaults (bootstrap's and init's), their help
// and both front ends take them from here.
const (
	// DefaultIMDSTimeout, DefaultSystemdTimeout and DefaultDiscoveryTimeout are
	// --imds-timeout, --systemd-timeout and --discovery-timeout when not given.
	DefaultIMDSTimeout      = 60 * time.Second
	DefaultSystemdTimeout   = 5 * time.Minute
	DefaultDiscoveryTimeout = 10 * time.Minute
	// DefaultAPIRetryAttempts is bootstrap.sh's API_RETRY_ATTEMPTS.
	DefaultAPIRetryAttempts = 3
	// DefaultPauseContainerVersion is bootstrap.sh's PAUSE_CONTAINER_VERSION.
	DefaultPauseContainerVersion = "3.5"
)

// DefaultSettings are the settings of a run given no flags: the flags' defaults.
func DefaultSettings() Settings {
	return Settings{
		Root: "/", IMDSTimeout: DefaultIMDSTimeout, SystemdTimeout: DefaultSystemdTimeout,
		DiscoveryTimeout: DefaultDiscoveryTimeout, LogFormat: LogConsole,
	}
}

// CheckSettings parses and checks eksboot's own flags of o (--root ... --image-profile)
// into Settings, naming each bad flag. discovery says whether the run may look the
// cluster up (its deadline must then be positive).
func CheckSettings(o Options, discovery bool) (Settings, error) {
	var problems []string
	s := settingsFrom(o, discovery, func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) })
	if len(problems) > 0 {
		return s, &UsageError{msg: quote.List(problems)}
	}
	return s, nil
}

// settingsFrom is CheckSettings reporting each problem to bad.
func settingsFrom(o Options, discovery bool, bad func(string, ...any)) Settings {
	s := Settings{
		Root: o.Root, DryRun: o.DryRun, NoRestart: o.NoRestart, IMDSEndpoint: o.IMDSEndpoint,
		IMDSTimeout: o.IMDSTimeout, IMDSv1Fallback: o.IMDSv1Fallback, SystemdTimeout: o.SystemdTimeout,
		DiscoveryTimeout: o.DiscoveryTimeout, LogFormat: o.LogFormat,
	}
	if o.Root == "" {
		bad("--root \"\": want a directory (/ for this node)")
	}
	switch o.LogFormat {
	case LogConsole, LogJSON, LogJournal:
	default:
		bad("--log-format %s: want %s, %s or %s", quote.Value(o.LogFormat), LogConsole, LogJSON, LogJournal)
	}
	if o.IMDSTimeout <= 0 {
		bad("--imds-timeout %v: want a positive duration such as 60s", o.IMDSTimeout)
	}
	if discovery && o.DiscoveryTimeout <= 0 {
		bad("--discovery-timeout %v: want a positive duration such as 10m", o.DiscoveryTimeout)
	}
	if o.SystemdTimeout <= 0 {
		bad("--systemd-timeout %v: want a positive duration such as 5m", o.SystemdTimeout)
	}
	if o.KubeletVersion != "" {
		var err error
		if s.KubeletVersion, err = kubeletconf.FindVersion(o.KubeletVersion); err != nil {
			bad("--kubelet-version %s: want a version such as 1.32.9 or v1.32.9-eks-113cf36", quote.Value(o.KubeletVersion))
		}
	}
	switch o.ImageProfile {
	case "", ProfileAL2, ProfileAL2023:
		s.ImageProfile = o.ImageProfile
	default:
		bad("--image-profile %s: want %s (or leave it out to detect the image)", quote.Value(o.ImageProfile), strings.Join(ProfileNames(), " or "))
	}
	return s
}

// The values of --log-format.
const (
	// LogConsole is human lines without timestamps; under systemd, when stderr is
	// the journal's stream, the journal's own protocol with each line's priority.
	LogConsole = "console"
	// LogJSON is one JSON object per line, for log pipelines.
	LogJSON = "json"
	// LogJournal is the journal's protocol (priorities and fields), whatever stderr is.
	LogJournal = "journal"
)

// LogFormatUsage is the help text of --log-format, for every command that has it.
const LogFormatUsage = "log format: console (under systemd, the journal with each line's priority), json or journal"

// envFlag ties a bootstrap.sh flag to its variable and its environment fallback.
type envFlag struct {
	name, env, usage string
	dst              func(*Options) *string
}

// bootstrapFlags lists bootstrap.sh's flags in the order of its help text. Each one
// takes a value; when absent, the environment variable of the same name is used.
var bootstrapFlags = []envFlag{
	{"use-max-pods", "USE_MAX_PODS", "true: set maxPods in kubelet-config.json from the instance type (true or false)", func(o *Options) *string { return &o.UseMaxPods }},
	{"b64-cluster-ca", "B64_CLUSTER_CA", "base64-encoded PEM certificate of the cluster CA", func(o *Options) *string { return &o.B64ClusterCA }},
	{"apiserver-endpoint", "APISERVER_ENDPOINT", "https URL of the cluster's API server", func(o *Options) *string { return &o.APIServerEndpoint }},
	{"kubelet-extra-args", "KUBELET_EXTRA_ARGS", "extra kubelet arguments, passed verbatim as KUBELET_EXTRA_ARGS", func(o *Options) *string { return &o.KubeletExtraArgs }},
	{"enable-docker-bridge", "ENABLE_DOCKER_BRIDGE", "dockerd only; ignored with a warning on containerd (true or false)", func(o *Options) *string { return &o.EnableDockerBridge }},
	{"aws-api-retry-attempts", "API_RETRY_ATTEMPTS", fmt.Sprintf("retries of AWS API calls (a whole number, default %d)", DefaultAPIRetryAttempts), func(o *Options) *string { return &o.APIRetryAttempts }},
	{"docker-config-json", "DOCKER_CONFIG_JSON", "dockerd only; ignored with a warning on containerd", func(o *Options) *string { return &o.DockerConfigJSON }},
	{"containerd-config-file", "CONTAINERD_CONFIG_FILE", "containerd config template to use (under --root); SANDBOX_IMAGE in it becomes the pause image", func(o *Options) *string { return &o.ContainerdConfigFile }},
	{"pause-container-account", "PAUSE_CONTAINER_ACCOUNT", "12-digit AWS account of the pause image's ECR repository", func(o *Options) *string { return &o.PauseContainerAccount }},
	{"pause-container-version", "PAUSE_CONTAINER_VERSION", "tag of the pause image (default " + DefaultPauseContainerVersion + ")", func(o *Options) *string { return &o.PauseContainerVersion }},
	{"dns-cluster-ip", "DNS_CLUSTER_IP", "cluster DNS IP address(es), comma-separated", func(o *Options) *string { return &o.DNSClusterIP }},
	{"container-runtime", "CONTAINER_RUNTIME", "container runtime: containerd (the only one supported)", func(o *Options) *string { return &o.ContainerRuntime }},
	{"ip-family", "IP_FAMILY", "IP family of the cluster: ipv4 or ipv6 (default ipv4)", func(o *Options) *string { return &o.IPFamily }},
	{"service-ipv6-cidr", "SERVICE_IPV6_CIDR", "IPv6 service CIDR of the cluster (implies --ip-family ipv6)", func(o *Options) *string { return &o.ServiceIPv6CIDR }},
	{"service-ipv4-cidr", "SERVICE_IPV4_CIDR", "IPv4 service CIDR of the cluster (sets the DNS IP to its .10 address)", func(o *Options) *string { return &o.ServiceIPv4CIDR }},
	{"enable-local-outpost", "ENABLE_LOCAL_OUTPOST", "local cluster on AWS Outposts (true or false)", func(o *Options) *string { return &o.EnableLocalOutpost }},
	{"cluster-id", "CLUSTER_ID", "cluster ID, for local clusters on Outposts", func(o *Options) *string { return &o.ClusterID }},
	{"mount-bpf-fs", "MOUNT_BPF_FS", "mount a BPF file system at /sys/fs/bpf (true or false, default true)", func(o *Options) *string { return &o.MountBPFFS }},
	{"local-disks", "LOCAL_DISKS", "set up instance-store disks: mount, raid0, raid10 or none", func(o *Options) *string { return &o.LocalDisks }},
}

// UsageError is a problem with the command line or its values: the process exits with
// status 2 and nothing is written.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &UsageError{msg: fmt.Sprintf(format, args...)}
}

// NewFlagSet returns the bootstrap command's flags bound to o.
func NewFlagSet(name string, o *Options) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	for _, f := range bootstrapFlags {
		fs.StringVar(f.dst(o), f.name, "", f.usage+" [$"+f.env+"]")
	}
	SettingsFlags(fs, o)
	fs.BoolVar(&o.GracefulShutdown, "graceful-shutdown", false, "turn on the kubelet's graceful node shutdown, with a 150s grace period of which 30s for critical pods (see docs/graceful-shutdown.md)")
	fs.DurationVar(&o.ShutdownGracePeriod, "shutdown-grace-period", 0, "kubelet shutdownGracePeriod, whole seconds up to 1h (turns graceful node shutdown on)")
	fs.DurationVar(&o.ShutdownGracePeriodCriticalPods, "shutdown-grace-period-critical-pods", 0, "kubelet shutdownGracePeriodCriticalPods: the part of the grace period kept for critical pods")
	fs.StringVar(&o.MaxPodsMode, "max-pods-mode", modeENIMaxPods, "how max pods is worked out: eni-max-pods (bootstrap.sh's number: the classic ENI formula, no cap), or as max-pods-calculator.sh recommends, capped at 110 (<= 30 vCPUs) or 250: secondary-ip, prefix-delegation (nitro types), ipv6 (the cap alone)")
	fs.BoolVar(&o.MaxPodsCustomNetworking, "max-pods-custom-networking", false, "VPC CNI custom networking: one ENI fewer for pods (with secondary-ip or prefix-delegation)")
	fs.BoolVar(&o.MaxPodsSecurityGroupsForPods, "max-pods-security-groups-for-pods", false, "VPC CNI security groups for pods (ENABLE_POD_ENI): one ENI fewer for pods (with secondary-ip or prefix-delegation)")
	fs.IntVar(&o.MaxPodsMaxENI, "max-pods-max-eni", 0, "the VPC CNI's MAX_ENI: use at most this many ENIs (with secondary-ip or prefix-delegation; 0: no limit)")
	fs.BoolVar(&o.MaxPodsUncapped, "max-pods-uncapped", false, "no 110/250 cap (with secondary-ip or prefix-delegation)")
	fs.BoolVar(&o.KubeReservedFromEffectiveMaxPods, "kube-reserved-from-effective-max-pods", false, "size kubeReserved memory for the max pods the kubelet will run (--max-pods in --kubelet-extra-args, or 110 with --use-max-pods false), not bootstrap.sh's computed value")
	fs.BoolVarP(&o.Help, "help", "h", false, "print this help")
	annotate(fs)
	return fs
}

// SettingsFlags binds eksboot's own flags, the run's Settings (--root ...
// --systemd-timeout), onto fs, with their defaults (DefaultSettings) and help: the
// bootstrap command's and init's, defined once.
func SettingsFlags(fs *pflag.FlagSet, o *Options) {
	d := DefaultSettings()
	fs.StringVar(&o.Root, "root", d.Root, "directory that stands for / (every read of node files and every write goes under it)")
	fs.BoolVar(&o.DryRun, "dry-run", false, "print each file it would write, as a diff against what is there, and the systemd actions; write nothing")
	fs.BoolVar(&o.NoRestart, "no-restart", false, "write the files but leave systemd alone")
	fs.StringVar(&o.IMDSEndpoint, "imds-endpoint", "", "instance metadata service URL [$AWS_EC2_METADATA_SERVICE_ENDPOINT, $IMDS_ENDPOINT host[:port]]")
	fs.StringVar(&o.KubeletVersion, "kubelet-version", "", "kubelet version such as 1.32.9 (default: /etc/eks/kubelet-version.txt, else what kubelet --version says)")
	fs.StringVar(&o.ImageProfile, "image-profile", "", "the node image's kind: al2 or al2023 (default: detected from /etc/os-release under the root; see docs/compat.md)")
	fs.StringVar(&o.LogFormat, "log-format", d.LogFormat, LogFormatUsage)
	fs.DurationVar(&o.IMDSTimeout, "imds-timeout", d.IMDSTimeout, "deadline for reading the instance metadata (init: and the user data)")
	fs.DurationVar(&o.DiscoveryTimeout, "discovery-timeout", d.DiscoveryTimeout, "deadline for looking the cluster up with eks:DescribeCluster when the CA or the endpoint is not given (waiting for a CREATING cluster included)")
	fs.BoolVar(&o.IMDSv1Fallback, "imds-v1-fallback", false, "read the instance metadata without a session token (IMDSv1) when IMDS refuses one (off: many accounts disable IMDSv1)")
	fs.DurationVar(&o.SystemdTimeout, "systemd-timeout", d.SystemdTimeout, "deadline for the systemd jobs (daemon-reload, restarts)")
	flaghelp.SetValues(fs, "image-profile", ProfileNames()...)
	flaghelp.SetValues(fs, "log-format", LogConsole, LogJSON, LogJournal)
	flaghelp.SetArg(fs, "root", "dir")
}

// annotate records the values and the file arguments of the bootstrap flags, for
// shell completion and the man page.
func annotate(fs *pflag.FlagSet) {
	for _, name := range []string{"use-max-pods", "enable-docker-bridge", "enable-local-outpost", "mount-bpf-fs"} {
		flaghelp.SetValues(fs, name, "true", "false")
	}
	flaghelp.SetValues(fs, "container-runtime", "containerd")
	flaghelp.SetValues(fs, "ip-family", "ipv4", "ipv6")
	flaghelp.SetValues(fs, "local-disks", "mount", "raid0", "raid10", "none")
	flaghelp.SetValues(fs, "max-pods-mode", modeENIMaxPods, modeSecondaryIP, modePrefixDelegation, modeIPv6)
	flaghelp.SetArg(fs, "containerd-config-file", "file")
}

// Parse reads the bootstrap command line (without the command name) and, for each
// bootstrap.sh flag not given, its environment variable. It checks the form of the
// command line only; Validate checks the values.
func Parse(args []string, getenv func(string) string) (Options, error) {
	var o Options
	fs := NewFlagSet("bootstrap", &o)
	if err := CheckFlagValues(fs, args); err != nil {
		return o, err
	}
	if err := fs.Parse(args); err != nil {
		return o, usagef("%s", strings.TrimSpace(err.Error()))
	}
	if o.Help {
		return o, nil
	}
	for _, f := range bootstrapFlags {
		if !fs.Changed(f.name) {
			*f.dst(&o) = getenv(f.env)
		}
	}
	o.PauseContainerImage = getenv("PAUSE_CONTAINER_IMAGE")
	o.shutdownFlagsSet = map[string]bool{}
	for _, name := range []string{"graceful-shutdown", "shutdown-grace-period", "shutdown-grace-period-critical-pods"} {
		o.shutdownFlagsSet[name] = fs.Changed(name)
	}
	switch pos := fs.Args(); len(pos) {
	case 0:
	case 1:
		o.ClusterName = pos[0]
	default:
		return o, usagef("too many arguments %q: want one CLUSTER_NAME (flags take one value each; quote values that contain spaces)", pos)
	}
	return o, nil
}

// CheckFlagValues reports each flag of fs that takes a value but is followed by
// another of fs's flags, as an unquoted empty variable gives (--dns-cluster-ip $DNS
// --use-max-pods false): pflag would take the second flag as the value and leave its
// own value as a stray argument. A value such as --kubelet-extra-args'
// "--max-pods=58" is not one of fs's flags and passes. Call it before fs.Parse(args);
// the error is a UsageError.
func CheckFlagValues(fs *pflag.FlagSet, args []string) error {
	known := func(word string) (*pflag.Flag, bool) {
		name, ok := strings.CutPrefix(word, "--")
		if !ok {
			return nil, false
		}
		name, _, _ = strings.Cut(name, "=")
		f := fs.Lookup(name)
		return f, f != nil
	}
	var problems []string
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--" {
			break
		}
		f, ok := known(args[i])
		if !ok || strings.Contains(args[i], "=") || f.NoOptDefVal != "" {
			continue // not a flag, a flag with its value attached, or a flag without one
		}
		if next, ok := known(args[i+1]); ok {
			problems = append(problems, fmt.Sprintf("--%s: got the flag --%s as its value (an empty variable?); give a value or leave the flag out", f.Name, next.Name))
			continue // the next word is a flag: scan it as one
		}
		i++ // the word after a value flag is its value
	}
	if len(problems) > 0 {
		return &UsageError{msg: quote.List(problems)}
	}
	return nil
}

// UsageSynopsis and UsageSummary are the bootstrap command's usage line (after the
// program's name) and what it does.
const (
	UsageSynopsis = "[options] CLUSTER_NAME"
	UsageSummary  = "Joins this EC2 instance to the EKS cluster CLUSTER_NAME (a drop-in for /etc/eks/bootstrap.sh)."
)

// Usage writes the bootstrap command's help text, wrapped at flaghelp.Width columns.
func Usage(w io.Writer, prog string) {
	var o Options
	fmt.Fprintf(w, "Usage: %s %s\n\n%s\n\nOptions:\n", prog, UsageSynopsis, UsageSummary)
	flaghelp.Write(w, NewFlagSet(prog, &o))
}
