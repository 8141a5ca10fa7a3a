package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/pflag"
	"go.uber.org/zap"

	"github.com/eksboot/eksboot/assets"
	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/ec2api"
	"github.com/eksboot/eksboot/eksapi"
	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/internal/imagefixture"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/maxpods"
	"github.com/eksboot/eksboot/render/sim"
	"github.com/eksboot/eksboot/rootfs"
	"github.com/eksboot/eksboot/systemd"
	"github.com/eksboot/eksboot/userdata"
)

// errOffline is what render's environment answers for anything outside.
var errOffline = errors.New("not available: eksboot render is offline")

// runRender prints what a node launched with some user data would get, without IMDS,
// AWS or root: the user data's scripts evaluated on a simulated instance
// (siminstance.Default with the given type and region), then the same bootstrap
// run as init and bootstrap.sh, into memory.
// renderFlags are render's options.
type renderFlags struct {
	file, instanceType, region, kubeletVersion, profile string
	help, discover                                      bool
}

// flagSet binds render's flags to o.
func (o *renderFlags) flagSet(prog string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(prog, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.file, "user-data", "", "file with the user data, as the instance receives it (after EC2's base64)")
	fs.StringVar(&o.instanceType, "instance-type", "", "instance type, such as m5.large")
	fs.StringVar(&o.region, "region", "us-west-2", "region")
	fs.StringVar(&o.kubeletVersion, "kubelet-version", "1.32.9", "kubelet version of the node image")
	fs.StringVar(&o.profile, "image-profile", bootstrap.ProfileAL2, "the node image's kind: al2 or al2023")
	fs.BoolVar(&o.discover, "discover", false, "look up with eks:DescribeCluster, with your own AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, else aws configure export-credentials), what the node would discover (the CA, the endpoint, the service CIDR) when the user data leaves it out")
	fs.BoolVarP(&o.help, "help", "h", false, "print this help")
	return fs
}

// renderAbout is render's paragraph of help.
const renderAbout = "Prints the files and kubelet flags a node launched with this user data would get: its scripts and cloud-config are evaluated on a simulated instance, running nothing on this host (offline unless --discover)."

func runRender(prog string, args []string, stdout, stderr io.Writer) int {
	var o renderFlags
	fs := o.flagSet(prog)
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", prog, err)
		return exitUsage
	}
	file, instanceType, region, kubeletVersion, profile, discover := o.file, o.instanceType, o.region, o.kubeletVersion, o.profile, o.discover
	if o.help { // Main answers --help from the command registry; this is for direct calls
		fmt.Fprintf(stdout, "Usage: %s --user-data FILE --instance-type TYPE [--region R] [--discover]\n\n%s\n\nOptions:\n%s", prog, renderAbout, fs.FlagUsages())
		return exitOK
	}
	if file == "" || instanceType == "" || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: give --user-data FILE and --instance-type TYPE, and no arguments (see --help)\n", prog)
		return exitUsage
	}
	if err := maxpods.CheckInstanceType(instanceType); err != nil {
		fmt.Fprintf(stderr, "%s: --instance-type: %v\n", prog, err)
		return exitUsage
	}
	version, err := kubeletconf.FindVersion(kubeletVersion)
	if err != nil {
		fmt.Fprintf(stderr, "%s: --kubelet-version %q: want a version such as 1.35.1\n", prog, kubeletVersion)
		return exitUsage
	}
	if profile != bootstrap.ProfileAL2 && profile != bootstrap.ProfileAL2023 {
		fmt.Fprintf(stderr, "%s: --image-profile %q: want al2 or al2023\n", prog, profile)
		return exitUsage
	}
	if err := checkRegion(region); err != nil {
		fmt.Fprintf(stderr, "%s: --region %q: %v\n", prog, region, err)
		return exitUsage
	}
	raw, err := rootfs.ReadRegularFile(file, userdata.MaxUserData) // a FIFO or /dev/zero never blocks or fills memory
	if err != nil {
		fmt.Fprintf(stderr, "%s: --user-data: %v\n", prog, err)
		return exitUsage
	}
	log, _ := newLogger("console", stderr)
	log = log.WithOptions(zap.IncreaseLevel(zap.WarnLevel))
	opts := renderOptions{instanceType: instanceType, region: region, kubeletVersion: version, profile: profile, log: log}
	if discover {
		opts.eks = discoverEKS
	}
	r, err := render(context.Background(), raw, opts)
	var ue *bootstrap.UsageError
	if errors.As(err, &ue) { // a bad value in the user data: bad input, exit 1
		err = errors.New(strings.ReplaceAll(err.Error(), "\n", " "))
	}
	if err != nil {
		return finish(prog, err, zap.NewNop(), stderr)
	}
	printRender(stdout, r, instanceType, region)
	return exitOK
}

// renderOptions are the simulated node's facts.
type renderOptions struct {
	instanceType, region string
	kubeletVersion       kubeletconf.Version
	profile              string
	log                  *zap.Logger
	// eks, when set, makes render look the cluster up (--discover); otherwise the
	// values discovery would supply are placeholders, reported as such.
	eks func(ctx context.Context, region string) (eksapi.API, error)
}

// rendered is what render found.
type rendered struct {
	// tree is what the bootstrap writes (node path -> content), flags the kubelet's
	// command line, from where the configuration came.
	tree  map[string][]byte
	flags string
	from  string
	// ev is the evaluation of the scripts (nil without script or cloud-config).
	ev *sim.Evaluation
	// after are the bootstrap's files that the scripts changed after it ran, with
	// their final content.
	after map[string][]byte
	// discovery lists the values the node takes from eks:DescribeCluster, as
	// placeholders (offline) or as looked up (--discover).
	discovery []string
	// warnings are printed after the files.
	warnings []string
}

// render evaluates raw's scripts on a simulated instance and runs the bootstrap
// their bootstrap.sh call (or the NodeConfig parts) asks for.
func render(ctx context.Context, raw []byte, o renderOptions) (*rendered, error) {
	parts, err := userdata.Parse(raw)
	if err != nil {
		return nil, err
	}
	s := bootstrap.DefaultSettings()
	s.NoRestart, s.ImageProfile = true, o.profile
	s.IMDSEndpoint = "http://127.0.0.1:9" // never dialled: Env.IMDS is simulated
	s.KubeletVersion = o.kubeletVersion
	r := &rendered{}
	req, nodeConfig, err := requestFromNodeConfigs(parts, nil, s)
	if err != nil {
		return nil, err
	}
	// The simulated node: its image's files exist only in memory, and nothing is
	// written: the plan is printed.
	files := imagefixture.Empty()
	if o.profile == bootstrap.ProfileAL2023 {
		files = imagefixture.AL2023{KubeletVersion: "v" + s.KubeletVersion.String()}.FS()
	}
	disc := &discovery{eks: o.eks}
	env := offlineEnv(files, o.log, o.instanceType, o.region, disc)
	plan := func(ctx context.Context, req nodeRequest) (*bootstrap.Node, error) {
		_, n, err := bootstrap.PlanNode(ctx, req.Config, env)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", req.From, err)
		}
		return n, nil
	}
	var last *bootstrap.Node
	var lastReq nodeRequest
	opts := sim.Options{
		Image:    map[string]sim.File{sim.BootstrapPath: {Data: assets.BootstrapShim(), Mode: 0o755}},
		Metadata: simulatedMetadata(o.instanceType, o.region),
	}
	if !nodeConfig {
		opts.Bootstrap = func(ctx context.Context, c sim.Call) (map[string]sim.File, error) {
			req, err := requestFromCall(c, s)
			if err != nil {
				return nil, err
			}
			n, err := plan(ctx, req)
			if err != nil {
				return nil, err
			}
			last, lastReq = n, req
			out := map[string]sim.File{}
			for _, f := range n.Files {
				out[f.Path] = sim.File{Data: f.Data, Mode: f.Mode}
			}
			return out, nil
		}
	}
	ev, evalErr := sim.Evaluate(ctx, parts, opts)
	switch {
	case evalErr != nil && !nodeConfig:
		return nil, fmt.Errorf("user data: %w", evalErr)
	case evalErr != nil:
		r.warnings = append(r.warnings, fmt.Sprintf("the user data's scripts: %v (the node is configured by its NodeConfig)", evalErr))
	default:
		r.ev = ev
	}
	if nodeConfig {
		n, err := plan(ctx, req)
		if err != nil {
			return nil, err
		}
		last, lastReq = n, req
		if ev != nil && len(ev.Calls) > 0 {
			r.warnings = append(r.warnings, fmt.Sprintf("%s also calls bootstrap.sh, after the NodeConfig configured the node: it bootstraps the node again (render shows the NodeConfig's node)", ev.Calls[0].Where))
		}
	} else {
		if len(ev.Calls) == 0 {
			var types []string
			for _, p := range parts {
				types = append(types, p.Name())
			}
			msg := fmt.Sprintf("%v (%s", errNothing, strings.Join(types, ", "))
			if len(ev.NotSimulated) > 0 {
				msg += "; not simulated: " + strings.Join(ev.NotSimulated, ", ")
			}
			return nil, errors.New(msg + ")")
		}
		c := ev.Calls[len(ev.Calls)-1]
		if len(c.Unknown) > 0 {
			return nil, fmt.Errorf("user data: %w", &sim.UnresolvedError{Where: c.Where, Reason: strings.Join(c.Unknown, "; ")})
		}
		if len(ev.Calls) > 1 {
			var where []string
			for _, c := range ev.Calls {
				where = append(where, c.Where)
			}
			r.warnings = append(r.warnings, fmt.Sprintf("bootstrap.sh is called %d times (%s): each run rewrites the node; render shows the last", len(ev.Calls), strings.Join(where, "; ")))
		}
	}
	if args := lastReq.Config.LocalDisksArgs; args != nil {
		o.log.Warn("on the node, the instance-store disks are set up first: " + kubeletconf.LocalDisksHelper + " " + strings.Join(args, " ") + " (render does not run it)")
	}
	r.tree = map[string][]byte{}
	for _, f := range last.Files {
		r.tree[f.Path] = f.Data
	}
	if ev != nil {
		r.after = map[string][]byte{}
		for p, f := range ev.Files {
			if old, ok := r.tree[p]; ok && !bytes.Equal(old, f.Data) {
				r.after[p] = f.Data
			}
		}
	}
	r.flags = strings.TrimSpace(last.KubeletArgs + " " + last.KubeletExtraArgs)
	r.from = lastReq.From
	r.discovery = disc.report()
	return r, nil
}

// requestFromCall interprets a bootstrap.sh call as the shim hands it to eksboot.
func requestFromCall(c sim.Call, s bootstrap.Settings) (nodeRequest, error) {
	r := nodeRequest{From: c.Where + ": bootstrap.sh"} // errors: Evaluate's caller says "user data: "
	cfg, _, err := bootstrap.FromFlags(c.Eksboot, func(k string) string { return c.Env[k] })
	if err != nil {
		return r, fmt.Errorf("%s: %w", r.From, err)
	}
	cfg.Settings = s
	r.Config = cfg
	return r, nil
}

// checkRegion accepts a region name such as us-west-2.
func checkRegion(r string) error {
	if !regionName().MatchString(r) {
		return errors.New("want a region name such as us-west-2")
	}
	return nil
}

var regionName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`) })

// offlineEnv is a bootstrap environment on a simulated instance with nothing outside
// but, with --discover, EKS.
func offlineEnv(files bootstrap.NodeFiles, log *zap.Logger, instanceType, region string, disc *discovery) *bootstrap.Env {
	inst := simulatedInstance(instanceType, region)
	env := bootstrap.DefaultEnv(nil, log, io.Discard, io.Discard)
	env.Files = files
	env.IMDS = func(context.Context, imds.Options) (*imds.Facts, error) {
		return &imds.Facts{
			Region: region, AccountID: inst.AccountID, Domain: inst.Domain, InstanceType: instanceType,
			InstanceID: inst.InstanceID, AvailabilityZone: inst.AvailabilityZone, MAC: inst.MAC, LocalIPv4: inst.LocalIPv4,
			LocalHostname: inst.LocalHostname,
			IPv6s:         []string{"2600:1f14:123:4500::1"}, VPCIPv4CIDRs: inst.VPCIPv4CIDRBlocks,
		}, nil
	}
	env.EC2 = func(context.Context, string, string, bool) (ec2api.API, error) {
		return offlineEC2{inst.LocalHostname}, nil
	}
	env.EKS = func(ctx context.Context, region, _ string, _ bool) (eksapi.API, error) { return disc.api(ctx, region) }
	env.Systemd = func(context.Context) (systemd.Manager, error) { return nil, errOffline }
	env.LookupHost = func(context.Context, string) ([]string, error) { return nil, errOffline }
	env.KubeletVersion = func(context.Context) (string, error) { return "", errOffline }
	env.Command = func(context.Context, string, ...string) error { return errOffline }
	env.Geteuid = func() int { return 0 }
	env.Getenv = func(string) string { return "" }
	env.CPUs = func() int {
		if t, ok := maxpods.Info(instanceType); ok && t.VCPUs > 0 {
			return t.VCPUs
		}
		return 2
	}
	env.DNSNameAttempts, env.DNSNameInterval = 1, 0
	return env
}

// offlineEC2 answers as EC2 would in a VPC with the default DNS settings: the
// private DNS name is the local host name. Instance types the table lacks are not
// looked up (the run falls back to 110 and says so).
type offlineEC2 struct{ hostname string }

func (e offlineEC2) PrivateDNSName(context.Context, string) (string, error) { return e.hostname, nil }

func (offlineEC2) InstanceTypeInfo(context.Context, string) (maxpods.TypeInfo, error) {
	return maxpods.TypeInfo{}, errOffline
}

// printRender prints the files in path order (the CA as its digest), the flags, and
// what each part of the user data did.
func printRender(w io.Writer, r *rendered, instanceType, region string) {
	fmt.Fprintf(w, "# eksboot render: %s in %s, from %s\n", instanceType, region, r.from)
	paths := make([]string, 0, len(r.tree))
	for p := range r.tree {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		b := r.tree[p]
		edited := ""
		if a, ok := r.after[p]; ok {
			b, edited = a, " (as the user data's scripts leave it, after bootstrap.sh)"
		}
		if strings.HasSuffix(p, "/pki/ca.crt") {
			if len(r.discovery) > 0 && bytes.Equal(b, placeholderCA()) {
				fmt.Fprintf(w, "\n==> %s: the cluster CA, from eks:DescribeCluster at boot\n", p)
				continue
			}
			fmt.Fprintf(w, "\n==> %s: the cluster CA, %d bytes, sha256 %x\n", p, len(b), sha256.Sum256(b))
			continue
		}
		fmt.Fprintf(w, "\n==> %s%s\n%s", p, edited, b)
		if len(b) > 0 && b[len(b)-1] != '\n' {
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintf(w, "\n==> kubelet flags\n%s\n", r.flags)
	if len(r.discovery) > 0 {
		fmt.Fprintf(w, "\n==> cluster discovery\n")
		for _, d := range r.discovery {
			fmt.Fprintf(w, "%s\n", d)
		}
	}
	if r.ev != nil {
		fmt.Fprintf(w, "\n==> user data\n")
		for _, p := range r.ev.Parts {
			if len(p.Notes) == 0 {
				fmt.Fprintf(w, "%s: nothing simulated\n", p.Part.Name())
				continue
			}
			for _, n := range p.Notes {
				if !strings.HasPrefix(n, "part ") {
					n = p.Part.Name() + ": " + n
				}
				fmt.Fprintf(w, "%s\n", n)
			}
		}
		var own []string
		for _, p := range r.ev.Written {
			if _, ok := r.tree[p]; !ok && !strings.HasPrefix(p, "/tmp/") {
				own = append(own, p)
			}
		}
		if len(own) > 0 {
			fmt.Fprintf(w, "files the user data writes: %s\n", strings.Join(own, ", "))
		}
		if len(r.ev.NotSimulated) > 0 {
			fmt.Fprintf(w, "not simulated (no-ops here; on the node they run): %s\n", strings.Join(r.ev.NotSimulated, ", "))
		}
	}
	for _, wn := range r.warnings {
		fmt.Fprintf(w, "\nwarning: %s\n", wn)
	}
}
