// Package bootstrap joins an EC2 instance to an EKS cluster, as /etc/eks/bootstrap.sh
// does: it validates bootstrap.sh's options, reads the instance's facts, computes the
// kubelet's configuration, writes it under the root and restarts the units through
// systemd. Run is the checklist; each step lives in its own file.
//
// Its rooms: the two front ends that make the one typed Config, what the user asked
// and read-only once made: Validate (options.go: Options, bootstrap.sh's flags as
// data with their environment fallbacks, DefaultOptions with every default once;
// validate.go; the command line itself is parsed by package cli/flags, and this
// package has no pflag) and FromNodeConfig (nodeconfig.go; request.go merges a user
// data's NodeConfigs for init and render); the facts (facts.go, gatherFacts, the only
// reader of IMDS, EC2, EKS, DNS and node files, through Env; the cluster that
// discovery finds is Facts.Cluster, discover.go); the pure computation
// of the node (plan.go, Compute, with ComputeNode running the facts first); the run
// (run.go: lock, facts, compute, diff, write, restart, each step heard by
// Env.OnStep); and Actions (actions.go), the systemd operations the changes need.
// The NodeConfig API itself is package nodeconfig, user data's bytes are package
// userdata, and `eksboot render`'s offline run is package render.
package bootstrap

import (
	"fmt"
	"slices"
	"strings"
	"time"

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
	// ShutdownFlagsGiven says which of the three flags above the command line named
	// (Complete fills it).
	ShutdownFlagsGiven map[string]bool

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
	// KubeletStart is init's order (KubeletStartFor): with ReloadOnly and Early,
	// the config phase also queues the kubelet's start. Recorded in the status.
	KubeletStart KubeletStart
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

// DefaultOptions are the options of a command line with no flags: every flag's
// default, written once. The flags (package cli/flags) are defined with these
// defaults, and DefaultSettings is their Settings. bootstrap.sh's own flags default
// to "" here: Validate gives "" bootstrap.sh's meaning (DefaultAPIRetryAttempts,
// DefaultPauseContainerVersion, ...), and the help says so.
func DefaultOptions() Options {
	return Options{
		Root: "/", LogFormat: LogConsole,
		IMDSTimeout: DefaultIMDSTimeout, SystemdTimeout: DefaultSystemdTimeout, DiscoveryTimeout: DefaultDiscoveryTimeout,
		MaxPodsMode: modeENIMaxPods,
	}
}

// DefaultSettings are the settings of a run given no flags: DefaultOptions'.
func DefaultSettings() Settings {
	o := DefaultOptions()
	return Settings{
		Root: o.Root, IMDSTimeout: o.IMDSTimeout, SystemdTimeout: o.SystemdTimeout,
		DiscoveryTimeout: o.DiscoveryTimeout, LogFormat: o.LogFormat,
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

// LogFormats are --log-format's values.
func LogFormats() []string { return []string{LogConsole, LogJSON, LogJournal} }

// ScriptFlag is one of bootstrap.sh's flags: its name, the environment variable
// that stands in when the flag is not given, and its field of Options. Each takes a
// value; its help is package cli/flags'.
type ScriptFlag struct {
	Name, Env string
	Field     func(*Options) *string
}

// scriptFlags lists bootstrap.sh's flags in the order of its help text.
var scriptFlags = []ScriptFlag{
	{"use-max-pods", "USE_MAX_PODS", func(o *Options) *string { return &o.UseMaxPods }},
	{"b64-cluster-ca", "B64_CLUSTER_CA", func(o *Options) *string { return &o.B64ClusterCA }},
	{"apiserver-endpoint", "APISERVER_ENDPOINT", func(o *Options) *string { return &o.APIServerEndpoint }},
	{"kubelet-extra-args", "KUBELET_EXTRA_ARGS", func(o *Options) *string { return &o.KubeletExtraArgs }},
	{"enable-docker-bridge", "ENABLE_DOCKER_BRIDGE", func(o *Options) *string { return &o.EnableDockerBridge }},
	{"aws-api-retry-attempts", "API_RETRY_ATTEMPTS", func(o *Options) *string { return &o.APIRetryAttempts }},
	{"docker-config-json", "DOCKER_CONFIG_JSON", func(o *Options) *string { return &o.DockerConfigJSON }},
	{"containerd-config-file", "CONTAINERD_CONFIG_FILE", func(o *Options) *string { return &o.ContainerdConfigFile }},
	{"pause-container-account", "PAUSE_CONTAINER_ACCOUNT", func(o *Options) *string { return &o.PauseContainerAccount }},
	{"pause-container-version", "PAUSE_CONTAINER_VERSION", func(o *Options) *string { return &o.PauseContainerVersion }},
	{"dns-cluster-ip", "DNS_CLUSTER_IP", func(o *Options) *string { return &o.DNSClusterIP }},
	{"container-runtime", "CONTAINER_RUNTIME", func(o *Options) *string { return &o.ContainerRuntime }},
	{"ip-family", "IP_FAMILY", func(o *Options) *string { return &o.IPFamily }},
	{"service-ipv6-cidr", "SERVICE_IPV6_CIDR", func(o *Options) *string { return &o.ServiceIPv6CIDR }},
	{"service-ipv4-cidr", "SERVICE_IPV4_CIDR", func(o *Options) *string { return &o.ServiceIPv4CIDR }},
	{"enable-local-outpost", "ENABLE_LOCAL_OUTPOST", func(o *Options) *string { return &o.EnableLocalOutpost }},
	{"cluster-id", "CLUSTER_ID", func(o *Options) *string { return &o.ClusterID }},
	{"mount-bpf-fs", "MOUNT_BPF_FS", func(o *Options) *string { return &o.MountBPFFS }},
	{"local-disks", "LOCAL_DISKS", func(o *Options) *string { return &o.LocalDisks }},
}

// ScriptFlags are bootstrap.sh's flags, in the order of its help text.
func ScriptFlags() []ScriptFlag { return slices.Clone(scriptFlags) }

// ShutdownFlags are the names of the graceful-shutdown flags, whose being given
// matters (Options.ShutdownFlagsGiven).
var ShutdownFlags = []string{"graceful-shutdown", "shutdown-grace-period", "shutdown-grace-period-critical-pods"}

// Complete fills in what a parsed command line leaves to the environment, as
// bootstrap.sh does: each of its flags that was not given (given reports whether
// the command line named a flag) from its environment variable, and
// PAUSE_CONTAINER_IMAGE, which has no flag; and it records which shutdown flags
// were given.
func (o *Options) Complete(given func(flag string) bool, getenv func(string) string) {
	for _, f := range scriptFlags {
		if !given(f.Name) {
			*f.Field(o) = getenv(f.Env)
		}
	}
	o.PauseContainerImage = getenv("PAUSE_CONTAINER_IMAGE")
	o.ShutdownFlagsGiven = map[string]bool{}
	for _, name := range ShutdownFlags {
		o.ShutdownFlagsGiven[name] = given(name)
	}
}

// UsageError is a problem with the command line or its values: the process exits with
// status 2 and nothing is written.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// Usagef is a UsageError, for the command line's parser (package cli/flags).
func Usagef(format string, args ...any) error {
	return &UsageError{msg: fmt.Sprintf(format, args...)}
}
