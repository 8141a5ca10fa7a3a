package cli

import (
	"bytes"
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

	"github.com/coreos/go-systemd/v22/unit"
	"github.com/spf13/pflag"
	"go.uber.org/zap"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/ec2api"
	"github.com/eksboot/eksboot/eksapi"
	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/imds/imdstest"
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
	raw, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintf(stderr, "%s: --user-data: %v\n", prog, err)
		return exitUsage
	}
	log, _ := newLogger("console", stderr)
	log = log.WithOptions(zap.IncreaseLevel(zap.WarnLevel))
	tree, flags, from, err := render(raw, instanceType, region, kubeletVersion, profile, log)
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
func render(raw []byte, instanceType, region, kubeletVersion, profile string, log *zap.Logger) (map[string][]byte, string, string, error) {
	parts, err := userdata.Parse(raw)
	if err != nil {
		return nil, "", "", err
	}
	base, _ := bootstrap.Parse(nil, func(string) string { return "" })
	req, ok, err := requestFromNodeConfigs(parts, nil, base)
	if !ok && err == nil {
		req, ok, err = requestFromScript(parts)
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
	dir, err := os.MkdirTemp("", "eksboot-render-")
	if err != nil {
		return nil, "", "", err
	}
	defer os.RemoveAll(dir)
	root, err := rootfs.New(dir)
	if err != nil {
		return nil, "", "", err
	}
	o := req.Options
	o.Root, o.NoRestart, o.DryRun, o.KubeletVersion, o.ImageProfile = dir, true, false, kubeletVersion, profile
	o.IMDSEndpoint = "http://127.0.0.1:9" // never dialled: Env.IMDS is simulated
	env := offlineEnv(root, log, instanceType, region)
	if err := bootstrap.RunNodeConfig(context.Background(), o, req.Extra, env); err != nil {
		if req.NodeConfig {
			return nil, "", "", fmt.Errorf("%s: %s", req.From, bootstrap.NodeConfigMessage(err))
		}
		return nil, "", "", fmt.Errorf("%s: %w", req.From, err)
	}
	tree, err := readTree(dir)
	if err != nil {
		return nil, "", "", err
	}
	return tree, kubeletFlags(tree), req.From, nil
}

// offlineEnv is a bootstrap environment on a simulated instance with nothing outside.
func offlineEnv(root *rootfs.Root, log *zap.Logger, instanceType, region string) *bootstrap.Env {
	inst := imdstest.DefaultInstance()
	env := bootstrap.DefaultEnv(root, log, io.Discard, io.Discard)
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
	env.EC2 = func(context.Context, string, string) (ec2api.API, error) { return offlineEC2{hostname}, nil }
	env.EKS = func(context.Context, string, string) (eksapi.API, error) {
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

// kubeletFlags is $KUBELET_ARGS $KUBELET_EXTRA_ARGS from the kubelet drop-ins.
func kubeletFlags(tree map[string][]byte) string {
	var flags []string
	for _, p := range []string{"/etc/systemd/system/kubelet.service.d/10-kubelet-args.conf", "/etc/systemd/system/kubelet.service.d/30-kubelet-extra-args.conf"} {
		opts, err := unit.DeserializeOptions(bytes.NewReader(tree[p]))
		if err != nil {
			continue
		}
		for _, o := range opts {
			if o.Name == "Environment" {
				_, v, _ := strings.Cut(unquoteEnv(o.Value), "=")
				flags = append(flags, v)
			}
		}
	}
	return strings.Join(flags, " ")
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

// unquoteEnv undoes kubeletconf.EnvDropIn's quoting of an Environment= assignment:
// 'a=b' as it is, "a=b" with \\, \", \t and %% unescaped.
func unquoteEnv(v string) string {
	if len(v) < 2 || v[0] != v[len(v)-1] || (v[0] != '\'' && v[0] != '"') {
		return v
	}
	q, v := v[0], v[1:len(v)-1]
	if q == '\'' {
		return v
	}
	return strings.NewReplacer(`\\`, `\`, `\"`, `"`, `\t`, "\t", "%%", "%").Replace(v)
}
