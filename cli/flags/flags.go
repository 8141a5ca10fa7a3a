// Package flags is eksboot's command line for a bootstrap run: the pflag sets of
// bootstrap.sh's flags (with their environment fallbacks) and of eksboot's own, their
// help and completion annotations, seeded with bootstrap.DefaultOptions, and the
// parse of the bootstrap command into bootstrap.Options (Parse: `eksboot bootstrap`,
// bootstrap.sh, and the bootstrap.sh calls that `eksboot render` simulates; then
// bootstrap.Validate). Package bootstrap holds the Options type and its validation
// and has no pflag; `eksboot init` shares Settings.
package flags

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/internal/flaghelp"
	"github.com/eksboot/eksboot/internal/quote"
)

// scriptUsage is the help of each of bootstrap.sh's flags (bootstrap.ScriptFlags).
var scriptUsage = map[string]string{
	"use-max-pods":            "true: set maxPods in kubelet-config.json from the instance type (true or false)",
	"b64-cluster-ca":          "base64-encoded PEM certificate of the cluster CA",
	"apiserver-endpoint":      "https URL of the cluster's API server",
	"kubelet-extra-args":      "extra kubelet arguments, passed verbatim as KUBELET_EXTRA_ARGS",
	"enable-docker-bridge":    "dockerd only; ignored with a warning on containerd (true or false)",
	"aws-api-retry-attempts":  fmt.Sprintf("retries of AWS API calls (a whole number, default %d)", bootstrap.DefaultAPIRetryAttempts),
	"docker-config-json":      "dockerd only; ignored with a warning on containerd",
	"containerd-config-file":  "containerd config template to use (under --root); SANDBOX_IMAGE in it becomes the pause image",
	"pause-container-account": "12-digit AWS account of the pause image's ECR repository",
	"pause-container-version": "tag of the pause image (default " + bootstrap.DefaultPauseContainerVersion + ")",
	"dns-cluster-ip":          "cluster DNS IP address(es), comma-separated",
	"container-runtime":       "container runtime: containerd (the only one supported)",
	"ip-family":               "IP family of the cluster: ipv4 or ipv6 (default ipv4)",
	"service-ipv6-cidr":       "IPv6 service CIDR of the cluster (implies --ip-family ipv6)",
	"service-ipv4-cidr":       "IPv4 service CIDR of the cluster (sets the DNS IP to its .10 address)",
	"enable-local-outpost":    "local cluster on AWS Outposts (true or false)",
	"cluster-id":              "cluster ID, for local clusters on Outposts",
	"mount-bpf-fs":            "mount a BPF file system at /sys/fs/bpf (true or false, default true)",
	"local-disks":             "set up instance-store disks: mount, raid0, raid10 or none",
}

// LogFormatUsage is the help text of --log-format, for every command that has it.
const LogFormatUsage = "log format: console (under systemd, the journal with each line's priority), json or journal"

// Bootstrap returns the bootstrap command's flags bound to o, with
// bootstrap.DefaultOptions' defaults.
func Bootstrap(name string, o *bootstrap.Options) *pflag.FlagSet {
	d := bootstrap.DefaultOptions()
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	for _, f := range bootstrap.ScriptFlags() {
		fs.StringVar(f.Field(o), f.Name, *f.Field(&d), scriptUsage[f.Name]+" [$"+f.Env+"]")
	}
	Settings(fs, o)
	fs.BoolVar(&o.GracefulShutdown, "graceful-shutdown", d.GracefulShutdown, "turn on the kubelet's graceful node shutdown, with a 150s grace period of which 30s for critical pods (see docs/graceful-shutdown.md)")
	fs.DurationVar(&o.ShutdownGracePeriod, "shutdown-grace-period", d.ShutdownGracePeriod, "kubelet shutdownGracePeriod, whole seconds up to 1h (turns graceful node shutdown on)")
	fs.DurationVar(&o.ShutdownGracePeriodCriticalPods, "shutdown-grace-period-critical-pods", d.ShutdownGracePeriodCriticalPods, "kubelet shutdownGracePeriodCriticalPods: the part of the grace period kept for critical pods")
	fs.StringVar(&o.MaxPodsMode, "max-pods-mode", d.MaxPodsMode, "how max pods is worked out: eni-max-pods (bootstrap.sh's number: the classic ENI formula, no cap), or as max-pods-calculator.sh recommends, capped at 110 (<= 30 vCPUs) or 250: secondary-ip, prefix-delegation (nitro types), ipv6 (the cap alone)")
	fs.BoolVar(&o.MaxPodsCustomNetworking, "max-pods-custom-networking", d.MaxPodsCustomNetworking, "VPC CNI custom networking: one ENI fewer for pods (with secondary-ip or prefix-delegation)")
	fs.BoolVar(&o.MaxPodsSecurityGroupsForPods, "max-pods-security-groups-for-pods", d.MaxPodsSecurityGroupsForPods, "VPC CNI security groups for pods (ENABLE_POD_ENI): one ENI fewer for pods (with secondary-ip or prefix-delegation)")
	fs.IntVar(&o.MaxPodsMaxENI, "max-pods-max-eni", d.MaxPodsMaxENI, "the VPC CNI's MAX_ENI: use at most this many ENIs (with secondary-ip or prefix-delegation; 0: no limit)")
	fs.BoolVar(&o.MaxPodsUncapped, "max-pods-uncapped", d.MaxPodsUncapped, "no 110/250 cap (with secondary-ip or prefix-delegation)")
	fs.BoolVar(&o.KubeReservedFromEffectiveMaxPods, "kube-reserved-from-effective-max-pods", d.KubeReservedFromEffectiveMaxPods, "size kubeReserved memory for the max pods the kubelet will run (--max-pods in --kubelet-extra-args, or 110 with --use-max-pods false), not bootstrap.sh's computed value")
	fs.BoolVarP(&o.Help, "help", "h", false, "print this help")
	annotate(fs)
	return fs
}

// Settings binds eksboot's own flags, the run's Settings (--root ...
// --systemd-timeout), onto fs, with their defaults (bootstrap.DefaultOptions) and
// help: the bootstrap command's and init's, defined once.
func Settings(fs *pflag.FlagSet, o *bootstrap.Options) {
	d := bootstrap.DefaultOptions()
	fs.StringVar(&o.Root, "root", d.Root, "directory that stands for / (every read of node files and every write goes under it)")
	fs.BoolVar(&o.DryRun, "dry-run", d.DryRun, "print each file it would write, as a diff against what is there, and the systemd actions; write nothing")
	fs.BoolVar(&o.NoRestart, "no-restart", d.NoRestart, "write the files but leave systemd alone")
	fs.StringVar(&o.IMDSEndpoint, "imds-endpoint", d.IMDSEndpoint, "instance metadata service URL [$AWS_EC2_METADATA_SERVICE_ENDPOINT, $IMDS_ENDPOINT host[:port]]")
	fs.StringVar(&o.KubeletVersion, "kubelet-version", d.KubeletVersion, "kubelet version such as 1.32.9 (default: /etc/eks/kubelet-version.txt, else what kubelet --version says)")
	fs.StringVar(&o.ImageProfile, "image-profile", d.ImageProfile, "the node image's kind: al2 or al2023 (default: detected from /etc/os-release under the root; see docs/compat.md)")
	fs.StringVar(&o.LogFormat, "log-format", d.LogFormat, LogFormatUsage)
	fs.DurationVar(&o.IMDSTimeout, "imds-timeout", d.IMDSTimeout, "deadline for reading the instance metadata (init: and the user data)")
	fs.DurationVar(&o.DiscoveryTimeout, "discovery-timeout", d.DiscoveryTimeout, "deadline for looking the cluster up with eks:DescribeCluster when the CA or the endpoint is not given (waiting for a CREATING cluster included)")
	fs.BoolVar(&o.IMDSv1Fallback, "imds-v1-fallback", d.IMDSv1Fallback, "read the instance metadata without a session token (IMDSv1) when IMDS refuses one (off: many accounts disable IMDSv1)")
	fs.DurationVar(&o.SystemdTimeout, "systemd-timeout", d.SystemdTimeout, "deadline for the systemd jobs (daemon-reload, restarts)")
	flaghelp.SetValues(fs, "image-profile", bootstrap.ProfileNames()...)
	flaghelp.SetValues(fs, "log-format", bootstrap.LogFormats()...)
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
	flaghelp.SetValues(fs, "max-pods-mode", bootstrap.MaxPodsModes()...)
	flaghelp.SetArg(fs, "containerd-config-file", "file")
}

// Parse reads the bootstrap command line (without the command name) and, for each
// bootstrap.sh flag not given, its environment variable (Options.Complete). It checks
// the form of the command line only; bootstrap.Validate checks the values.
func Parse(args []string, getenv func(string) string) (bootstrap.Options, error) {
	var o bootstrap.Options
	fs := Bootstrap("bootstrap", &o)
	if err := CheckValues(fs, args); err != nil {
		return o, err
	}
	if err := fs.Parse(args); err != nil {
		return o, bootstrap.Usagef("%s", strings.TrimSpace(err.Error()))
	}
	if o.Help {
		return o, nil
	}
	o.Complete(fs.Changed, getenv)
	switch pos := fs.Args(); len(pos) {
	case 0:
	case 1:
		o.ClusterName = pos[0]
	default:
		return o, bootstrap.Usagef("too many arguments %q: want one CLUSTER_NAME (flags take one value each; quote values that contain spaces)", pos)
	}
	return o, nil
}

// CheckValues reports each flag of fs that takes a value but is followed by another
// of fs's flags, as an unquoted empty variable gives (--dns-cluster-ip $DNS
// --use-max-pods false): pflag would take the second flag as the value and leave its
// own value as a stray argument. A value such as --kubelet-extra-args'
// "--max-pods=58" is not one of fs's flags and passes. Call it before fs.Parse(args);
// the error is a bootstrap.UsageError.
func CheckValues(fs *pflag.FlagSet, args []string) error {
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
		return bootstrap.Usagef("%s", quote.List(problems))
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
	var o bootstrap.Options
	fmt.Fprintf(w, "Usage: %s %s\n\n%s\n\nOptions:\n", prog, UsageSynopsis, UsageSummary)
	flaghelp.Write(w, Bootstrap(prog, &o))
}
