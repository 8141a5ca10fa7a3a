package cli

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"go.uber.org/zap"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/ec2api"
	"github.com/eksboot/eksboot/eksapi"
	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/internal/imagefixture"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/maxpods"
	"github.com/eksboot/eksboot/rootfs"
	"github.com/eksboot/eksboot/systemd"
	"github.com/eksboot/eksboot/userdata"
)

// errOffline is what render's environment answers for anything outside.
var errOffline = errors.New("not available: eksboot render is offline")

// runRender prints what a node launched with some user data would get, without IMDS,
// AWS or root: the same bootstrap run as init and bootstrap.sh, into a temporary root,
// on a simulated instance (imdstest.DefaultInstance with the given type and region).
func runRender(prog string, args []string, stdout, stderr io.Writer) int {
	var file, instanceType, region, kubeletVersion, profile string
	var help bool
	fs := pflag.NewFlagSet(prog, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	fs.StringVar(&file, "user-data", "", "file with the user data, as the instance receives it (after EC2's base64)")
	fs.StringVar(&instanceType, "instance-type", "", "instance type, such as m5.large")
	fs.StringVar(&region, "region", "us-west-2", "region")
	fs.StringVar(&kubeletVersion, "kubelet-version", "1.32.9", "kubelet version of the node image")
	fs.StringVar(&profile, "image-profile", bootstrap.ProfileAL2, "the node image's kind: al2 or al2023")
	fs.BoolVarP(&help, "help", "h", false, "print this help")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", prog, err)
		return exitUsage
	}
	if help {
		fmt.Fprintf(stdout, "Usage: %s --user-data FILE --instance-type TYPE [--region R]\n\nPrints the files and kubelet flags a node launched with this user data would get (offline).\n\nOptions:\n%s", prog, fs.FlagUsages())
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
	raw, err := rootfs.ReadRegularFile(file, userdata.MaxUserData) // a FIFO or /dev/zero never blocks or fills memory
	if err != nil {
		fmt.Fprintf(stderr, "%s: --user-data: %v\n", prog, err)
		return exitUsage
	}
	log, _ := newLogger("console", stderr)
	log = log.WithOptions(zap.IncreaseLevel(zap.WarnLevel))
	tree, flags, from, err := render(raw, instanceType, region, version, profile, log)
	var ue *bootstrap.UsageError
	if errors.As(err, &ue) { // a bad value in the user data: bad input, exit 1
		err = errors.New(strings.ReplaceAll(err.Error(), "\n", " "))
	}
	if err != nil {
		return finish(prog, err, zap.NewNop(), stderr)
	}
	printRender(stdout, tree, flags, from, instanceType, region)
	return exitOK
}

// render runs the bootstrap for raw on a simulated instance and returns the files it
// wrote (node path -> content), the kubelet flags and where the configuration came from.
func render(raw []byte, instanceType, region string, kubeletVersion kubeletconf.Version, profile string, log *zap.Logger) (map[string][]byte, string, string, error) {
	parts, err := userdata.Parse(raw)
	if err != nil {
		return nil, "", "", err
	}
	s := bootstrap.DefaultSettings()
	s.NoRestart, s.ImageProfile = true, profile
	s.IMDSEndpoint = "http://127.0.0.1:9" // never dialled: Env.IMDS is simulated
	s.KubeletVersion = kubeletVersion
	req, ok, err := requestFromNodeConfigs(parts, nil, s)
	if !ok && err == nil {
		req, ok, err = requestFromScript(parts, s)
	}
	if err != nil {
		return nil, "", "", err
	}
	if !ok {
		var types []string
		for _, p := range parts {
			types = append(types, p.Name())
		}
		return nil, "", "", fmt.Errorf("%w (%s; eksboot reads neither cloud-config nor the scripts it runs)", errNothing, strings.Join(types, ", "))
	}
	// The simulated node: its image's files exist only in memory, and nothing is
	// written: the plan is printed.
	files := imagefixture.Empty()
	if profile == bootstrap.ProfileAL2023 {
		files = imagefixture.AL2023{KubeletVersion: "v" + s.KubeletVersion.String()}.FS()
	}
	env := offlineEnv(files, log, instanceType, region)
	_, n, err := bootstrap.PlanNode(context.Background(), req.Config, env)
	if err != nil {
		return nil, "", "", fmt.Errorf("%s: %w", req.From, err)
	}
	if args := req.Config.LocalDisksArgs; args != nil {
		log.Warn("on the node, the instance-store disks are set up first: " + kubeletconf.LocalDisksHelper + " " + strings.Join(args, " ") + " (render does not run it)")
	}
	tree := map[string][]byte{}
	for _, f := range n.Files {
		tree[f.Path] = f.Data
	}
	return tree, strings.TrimSpace(n.KubeletArgs + " " + n.KubeletExtraArgs), req.From, nil
}

// offlineEnv is a bootstrap environment on a simulated instance with nothing outside.
func offlineEnv(files bootstrap.NodeFiles, log *zap.Logger, instanceType, region string) *bootstrap.Env {
	inst := imdstest.DefaultInstance()
	env := bootstrap.DefaultEnv(nil, log, io.Discard, io.Discard)
	env.Files = files
	domain := "amazonaws.com"
	if strings.HasPrefix(region, "cn-") {
		domain = "amazonaws.com.cn"
	}
	hostname := strings.ReplaceAll(inst.LocalHostname, "us-west-2", region)
	env.IMDS = func(context.Context, imds.Options) (*imds.Facts, error) {
		return &imds.Facts{
			Region: region, AccountID: inst.AccountID, Domain: domain, InstanceType: instanceType,
			InstanceID: inst.InstanceID, AvailabilityZone: region + "a", MAC: inst.MAC, LocalIPv4: inst.LocalIPv4,
			LocalHostname: hostname,
			IPv6s:         []string{"2600:1f14:123:4500::1"}, VPCIPv4CIDRs: inst.VPCIPv4CIDRBlocks,
		}, nil
	}
	env.EC2 = func(context.Context, string, string, bool) (ec2api.API, error) { return offlineEC2{hostname}, nil }
	env.EKS = func(context.Context, string, string, bool) (eksapi.API, error) {
		return nil, fmt.Errorf("cluster discovery (no CA or API server endpoint in the user data) is %w", errOffline)
	}
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

// readTree reads every file under dir as node path -> content.
func readTree(dir string) (map[string][]byte, error) {
	tree := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		tree["/"+filepath.ToSlash(rel)] = b
		return nil
	})
	return tree, err
}

// printRender prints the files in path order (the CA as its digest) and the flags.
func printRender(w io.Writer, tree map[string][]byte, flags, from, instanceType, region string) {
	fmt.Fprintf(w, "# eksboot render: %s in %s, from %s\n", instanceType, region, from)
	paths := make([]string, 0, len(tree))
	for p := range tree {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		b := tree[p]
		if strings.HasSuffix(p, "/pki/ca.crt") {
			fmt.Fprintf(w, "\n==> %s: the cluster CA, %d bytes, sha256 %x\n", p, len(b), sha256.Sum256(b))
			continue
		}
		fmt.Fprintf(w, "\n==> %s\n%s", p, b)
		if len(b) > 0 && b[len(b)-1] != '\n' {
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintf(w, "\n==> kubelet flags\n%s\n", flags)
}
