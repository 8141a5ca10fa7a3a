// Package rendercmd is eksboot-render (cmd/eksboot-render), the program that
// `eksboot render` execs: it parses render's command line (cli.RenderFlags), renders
// the user data (package render, whose simulator, render/sim, links
// github.com/itchyny/gojq and mvdan.cc/sh/v3) and prints the result.
//
// It is a program of its own, not a command of the node's binary, because Go runs the
// package initialisation of every package a binary links at every start: in eksboot,
// gojq's and sh's ran at every boot (1.2-1.7 ms here, and 2,460 of the 3,245
// allocations before main) for a command no boot runs, and they made 2.4 MiB of its
// 12.19 MiB.
// Package cli keeps render's flags, help, completion and man page, and its render
// command execs this program (cli.RenderProgram) as "eksboot render", so messages and
// exit statuses are the same either way. cli never imports this package:
// cmd/eksboot's TestNodeBinaryLinksNoRender fails when the node's binary links any of
// render, render/sim, gojq or sh.
package rendercmd

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"

	"go.uber.org/zap"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/cli"
	"github.com/eksboot/eksboot/inputcheck"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/maxpods"
	"github.com/eksboot/eksboot/render"
	"github.com/eksboot/eksboot/rootfs"
	"github.com/eksboot/eksboot/userdata"
)

// Main runs eksboot-render with args (args[0] is the program's name: "eksboot render"
// when eksboot execs it) and returns the exit status: 0 rendered, 2 a bad command
// line, 1 user data that does not render.
func Main(args []string, stdout, stderr io.Writer) int {
	prog := cli.RenderProgram
	if len(args) > 0 {
		prog, args = filepath.Base(args[0]), args[1:]
	}
	return Run(prog, args, stdout, stderr)
}

// Run prints what a node launched with some user data would get, without IMDS,
// AWS or root (render.Render: the user data's scripts evaluated on a simulated
// instance, then the same bootstrap run as init and bootstrap.sh, into memory).
func Run(prog string, args []string, stdout, stderr io.Writer) int {
	var o cli.RenderFlags
	fs := o.FlagSet(prog)
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", prog, err)
		return cli.ExitUsage
	}
	file, instanceType, region, kubeletVersion, profile, discover := o.UserData, o.InstanceType, o.Region, o.KubeletVersion, o.Profile, o.Discover
	if o.Help {
		cli.WriteRenderHelp(stdout, prog)
		return cli.ExitOK
	}
	if file == "" || instanceType == "" || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: give --user-data FILE and --instance-type TYPE, and no arguments (see --help)\n", prog)
		return cli.ExitUsage
	}
	if err := maxpods.CheckInstanceType(instanceType); err != nil {
		fmt.Fprintf(stderr, "%s: --instance-type: %v\n", prog, err)
		return cli.ExitUsage
	}
	version, err := kubeletconf.FindVersion(kubeletVersion)
	if err != nil {
		fmt.Fprintf(stderr, "%s: --kubelet-version %q: want a version such as 1.35.1\n", prog, kubeletVersion)
		return cli.ExitUsage
	}
	if profile != bootstrap.ProfileAL2 && profile != bootstrap.ProfileAL2023 {
		fmt.Fprintf(stderr, "%s: --image-profile %q: want al2 or al2023\n", prog, profile)
		return cli.ExitUsage
	}
	if err := checkRegion(region); err != nil {
		fmt.Fprintf(stderr, "%s: --region %q: %v\n", prog, region, err)
		return cli.ExitUsage
	}
	limitMemory()
	raw, err := rootfs.ReadRegularFile(file, userdata.MaxUserData) // a FIFO or /dev/zero never blocks or fills memory
	if err != nil {
		fmt.Fprintf(stderr, "%s: --user-data: %v\n", prog, err)
		return cli.ExitUsage
	}
	log, _ := cli.NewLogger("console", stderr)
	log = log.WithOptions(zap.IncreaseLevel(zap.WarnLevel))
	imageFiles, err := readImageFiles(o.ImageFiles)
	if err != nil {
		fmt.Fprintf(stderr, "%s: --image-file %v\n", prog, err)
		return cli.ExitUsage
	}
	opts := render.Options{InstanceType: instanceType, Region: region, KubeletVersion: version, Profile: profile, Log: log, ImageFiles: imageFiles}
	if discover {
		opts.EKS = render.CallerEKS
	}
	r, err := render.Render(context.Background(), raw, opts)
	var ue *bootstrap.UsageError
	if errors.As(err, &ue) { // a bad value in the user data: bad input, exit 1
		err = errors.New(strings.ReplaceAll(err.Error(), "\n", " "))
	}
	if err != nil {
		return cli.Finish(prog, err, zap.NewNop(), stderr)
	}
	printRender(stdout, r, instanceType, region)
	return cli.ExitOK
}

// maxImageFiles bounds --image-file: an image's own files that eksboot reads are a
// few.
const maxImageFiles = 64

// readImageFiles reads --image-file's PATH=LOCAL values: PATH an absolute, clean
// node path of one line, LOCAL a regular file of at most rootfs.DefaultReadLimit
// bytes (what eksboot reads of a node file).
func readImageFiles(specs []string) (map[string][]byte, error) {
	if len(specs) > maxImageFiles {
		return nil, fmt.Errorf("given %d times: at most %d files", len(specs), maxImageFiles)
	}
	out := map[string][]byte{}
	for _, spec := range specs {
		p, local, ok := strings.Cut(spec, "=")
		if !ok || local == "" {
			return nil, fmt.Errorf("%q: want PATH=LOCAL (the node path, then the local file)", spec)
		}
		if err := inputcheck.CheckText(p, false); err != nil || !path.IsAbs(p) || path.Clean(p) != p || p == "/" {
			return nil, fmt.Errorf("%q: PATH must be an absolute, clean node path of a file, such as /etc/kubernetes/kubelet/config.json.d/10-my.conf", p)
		}
		b, err := rootfs.ReadRegularFile(local, rootfs.DefaultReadLimit)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out[p] = b
	}
	return out, nil
}

// memoryLimit is render's soft memory limit (runtime/debug.SetMemoryLimit): the
// garbage collector runs as often as it must to keep the heap under it. The
// evaluation's bounds (render/sim.Limits) cap what it holds at once; what they do
// not cap is garbage, the copies a script makes and drops (x=$x$x, a growing sed
// output), which Go's default collector lets reach twice the live heap. Set by
// render only (bootstrap and init, another program, never call it), and a lower
// GOMEMLIMIT is kept.
const memoryLimit = 192 << 20

// limitMemory sets memoryLimit unless the limit is lower already.
func limitMemory() {
	if debug.SetMemoryLimit(-1) > memoryLimit {
		debug.SetMemoryLimit(memoryLimit)
	}
}

// checkRegion accepts a region name such as us-west-2.
func checkRegion(r string) error {
	if !regionName.MatchString(r) {
		return errors.New("want a region name such as us-west-2")
	}
	return nil
}

// regionName is a region's name. Compiled when the program starts: this program is
// never on a node's boot path.
var regionName = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`)

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
	if len(r.KubeletConfigFrom) > 0 {
		fmt.Fprintf(w, "\n==> kubelet configuration the user gave\n%s\n", strings.Join(r.KubeletConfigFrom, "\n"))
	}
	if r.KubeletEffective != nil {
		fmt.Fprintf(w, "\n==> the configuration the kubelet runs with: kubelet-config.json with the drop-ins of %s over it, in name order (flags aside)\n%s", kubeletconf.ConfigDropInDir, r.KubeletEffective)
	}
	fmt.Fprintf(w, "\n==> kubelet flags\n%s\n", r.Flags)
	fmt.Fprintf(w, "\n==> kubelet start\n%s\n", r.KubeletStart)
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
