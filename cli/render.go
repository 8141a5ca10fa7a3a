package cli

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/pflag"
	"go.uber.org/zap"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/maxpods"
	"github.com/eksboot/eksboot/render"
	"github.com/eksboot/eksboot/rootfs"
	"github.com/eksboot/eksboot/userdata"
)

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

// runRender prints what a node launched with some user data would get, without IMDS,
// AWS or root (render.Render: the user data's scripts evaluated on a simulated
// instance, then the same bootstrap run as init and bootstrap.sh, into memory).
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
	limitRenderMemory()
	raw, err := rootfs.ReadRegularFile(file, userdata.MaxUserData) // a FIFO or /dev/zero never blocks or fills memory
	if err != nil {
		fmt.Fprintf(stderr, "%s: --user-data: %v\n", prog, err)
		return exitUsage
	}
	log, _ := newLogger("console", stderr)
	log = log.WithOptions(zap.IncreaseLevel(zap.WarnLevel))
	opts := render.Options{InstanceType: instanceType, Region: region, KubeletVersion: version, Profile: profile, Log: log}
	if discover {
		opts.EKS = render.CallerEKS
	}
	r, err := render.Render(context.Background(), raw, opts)
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

// renderMemoryLimit is render's soft memory limit (runtime/debug.SetMemoryLimit):
// the garbage collector runs as often as it must to keep the heap under it. The
// evaluation's bounds (render/sim.Limits) cap what it holds at once; what they do
// not cap is garbage, the copies a script makes and drops (x=$x$x, a growing sed
// output), which Go's default collector lets reach twice the live heap. Set for
// render only: bootstrap and init never call it, and a lower GOMEMLIMIT is kept.
const renderMemoryLimit = 192 << 20

// limitRenderMemory sets renderMemoryLimit unless the limit is lower already.
func limitRenderMemory() {
	if debug.SetMemoryLimit(-1) > renderMemoryLimit {
		debug.SetMemoryLimit(renderMemoryLimit)
	}
}

// checkRegion accepts a region name such as us-west-2.
func checkRegion(r string) error {
	if !regionName().MatchString(r) {
		return errors.New("want a region name such as us-west-2")
	}
	return nil
}

// regionName is compiled on first use: nothing of render's runs when another
// command starts (GODEBUG=inittrace=1 shows cli's initialisation).
func regionName() *regexp.Regexp {
	regionOnce.Do(func() { regionRE = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`) })
	return regionRE
}

var (
	regionOnce sync.Once
	regionRE   *regexp.Regexp
)

// printRender prints the files in path order (the CA as its digest), the flags, and
// what each part of the user data did.
func printRender(w io.Writer, r *render.Result, instanceType, region string) {
	fmt.Fprintf(w, "# eksboot render: %s in %s, from %s\n", instanceType, region, r.From)
	paths := make([]string, 0, len(r.Tree))
	for p := range r.Tree {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		b := r.Tree[p]
		edited := ""
		if a, ok := r.After[p]; ok {
			b, edited = a, " (as the user data's scripts leave it, after bootstrap.sh)"
		}
		if strings.HasSuffix(p, "/pki/ca.crt") {
			if len(r.Discovery) > 0 && render.IsPlaceholderCA(b) {
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
	if r.HostsAtBoot != "" {
		fmt.Fprintf(w, "\n==> /etc/hosts: the node's own, with the addresses of %s (the local cluster's API server) added at boot\n", r.HostsAtBoot)
	}
	fmt.Fprintf(w, "\n==> kubelet flags\n%s\n", r.Flags)
	if len(r.Discovery) > 0 {
		fmt.Fprintf(w, "\n==> cluster discovery\n")
		for _, d := range r.Discovery {
			fmt.Fprintf(w, "%s\n", d)
		}
	}
	if r.Eval != nil {
		fmt.Fprintf(w, "\n==> user data\n")
		for _, p := range r.Eval.Parts {
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
		for _, p := range r.Eval.Written {
			if _, ok := r.Tree[p]; !ok && !strings.HasPrefix(p, "/tmp/") {
				own = append(own, p)
			}
		}
		if len(own) > 0 {
			fmt.Fprintf(w, "files the user data writes: %s\n", strings.Join(own, ", "))
		}
		if len(r.Eval.NotSimulated) > 0 {
			fmt.Fprintf(w, "not simulated (no-ops here; on the node they run): %s\n", strings.Join(r.Eval.NotSimulated, ", "))
		}
	}
	for _, wn := range r.Warnings {
		fmt.Fprintf(w, "\nwarning: %s\n", wn)
	}
}
