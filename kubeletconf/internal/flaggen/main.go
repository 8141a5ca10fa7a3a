// Command flaggen writes kubeletconf/kubeletflags/zz_generated_flags.go: for each
// kubelet minor version 1.24 to 1.37, the command-line flags that version's kubelet
// registers, read from the sources of the k8s.io/kubernetes release in versions (the
// newest patch of the minor the Go module proxy serves).
//
// The sources are parsed, never built or run: the flags are the registrations
// (fs.StringVar, fs.Var, fs.BoolP, ...) of cmd/kubelet/app/options — the functions
// the kubelet's command calls on its flag set, KubeletFlags.AddFlags,
// AddKubeletConfigFlags and AddGlobalFlags — followed into the functions they call in
// k8s.io/kubernetes/pkg/kubelet/config and in the k8s.io/component-base (logs,
// version) and k8s.io/klog/v2 releases that k8s.io/kubernetes pins, plus --help,
// which the command registers itself. Files are taken as `go build` takes them for
// linux/amd64 with no build tags. Names are normalised as the kubelet's flag set
// normalises them ('_' becomes '-').
//
// Checked against real kubelets (kubeletflags' TestAgreesWithARealKubelet and the
// FLAG: lines a kubelet logs at --v=1 for every flag it has, deprecated ones
// included): 1.24.17 and 1.34.4 built from their modules, 164 and 150 flags, and a
// 1.37.2 release build's --help, 131; each the same names and deprecations.
//
// The generator downloads the modules into the module cache with `go mod download`
// (they are not in eksboot's go.mod: eksboot never links them); `go generate
// ./kubeletconf/kubeletflags` runs it; with -check it only reports whether the file is
// up to date, and -offline uses only the module cache.
package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"

	"github.com/eksboot/eksboot/internal/genfile"
)

// versions is the k8s.io/kubernetes release read for each kubelet minor: the newest
// patch of the minor the Go module proxy serves. The proxy's version list of
// k8s.io/kubernetes is incomplete (it lists no 1.24-1.28 release and v1.29.6 as the
// newest 1.29), so the final patches of the minors that are out of support are
// written here from the Kubernetes release history and checked to download; the
// others are the newest the list shows. Moving a version changes the generated file,
// so the table is the generator's input, as go.mod is typegen's.
var versions = []string{
	"v1.24.17",
	"v1.25.16",
	"v1.26.15",
	"v1.27.16",
	"v1.28.15",
	"v1.29.15",
	"v1.30.14",
	"v1.31.14",
	"v1.32.13",
	"v1.33.13",
	"v1.34.4",
	"v1.35.4",
	"v1.36.3",
	"v1.37.2",
}

func main() {
	out := flag.String("out", "", "the Go file to write")
	check := flag.Bool("check", false, "write nothing; fail when -out differs from what would be generated")
	offline := flag.Bool("offline", false, "use only the module cache (GOPROXY=off)")
	verbose := flag.Bool("v", false, "report, per version, the calls that pass a flag set and were not followed")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: flaggen -out zz_generated_flags.go [-check] [-offline] [-v]")
		os.Exit(2)
	}
	if err := run(*out, *check, *offline, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "flaggen:", err)
		os.Exit(1)
	}
}

// run extracts every version's flags and writes (or checks) out.
func run(out string, check, offline, verbose bool) error {
	if !offline {
		listed, err := listVersions()
		if err != nil {
			return err
		}
		if err := newerServed(versions, listed); err != nil {
			return err
		}
	}
	sets, err := extractAll(offline, func(v string, unfollowed []string) {
		if verbose {
			for _, u := range unfollowed {
				fmt.Fprintf(os.Stderr, "%s: not followed: %s\n", v, u)
			}
		}
	})
	if err != nil {
		return err
	}
	src, err := generate(sets)
	if err != nil {
		return err
	}
	return genfile.WriteOrCheck(out, src, check, "the kubelet versions or the extractor changed", "make generate")
}

// A versionFlags is one release's flags.
type versionFlags struct {
	minor   int
	version string
	flags   map[string]flagInfo
}

// extractAll reads the flags of every release of versions.
func extractAll(offline bool, report func(version string, unfollowed []string)) ([]versionFlags, error) {
	var sets []versionFlags
	for _, v := range versions {
		roots, err := sources(v, offline)
		if err != nil {
			return nil, err
		}
		flags, unfollowed, err := extract(roots)
		if err != nil {
			return nil, fmt.Errorf("k8s.io/kubernetes %s: %w", v, err)
		}
		report(v, unfollowed)
		var minor int
		if _, err := fmt.Sscanf(v, "v1.%d.", &minor); err != nil {
			return nil, fmt.Errorf("version %s: %w", v, err)
		}
		sets = append(sets, versionFlags{minor: minor, version: v, flags: flags})
	}
	return sets, nil
}

// listVersions returns the k8s.io/kubernetes versions the module proxy lists.
func listVersions() ([]string, error) {
	cmd := exec.Command("go", "list", "-m", "-versions", "k8s.io/kubernetes")
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GO111MODULE=on", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m -versions k8s.io/kubernetes: %w", err)
	}
	return strings.Fields(string(out))[1:], nil
}

// newerServed returns an error naming the releases the proxy lists that are newer
// patches of a minor in pinned, so that a new patch release is not missed.
func newerServed(pinned, listed []string) error {
	patch := map[int]int{}
	for _, v := range pinned {
		var minor, p int
		if _, err := fmt.Sscanf(v, "v1.%d.%d", &minor, &p); err != nil {
			return fmt.Errorf("pinned release %q: %w", v, err)
		}
		patch[minor] = p
	}
	var newer []string
	for _, v := range listed {
		var minor, p int
		if n, _ := fmt.Sscanf(v, "v1.%d.%d", &minor, &p); n != 2 || strings.Contains(v, "-") {
			continue // a pre-release
		}
		if have, ok := patch[minor]; ok && p > have {
			newer = append(newer, v)
		}
	}
	if len(newer) > 0 {
		return fmt.Errorf("the module proxy serves newer patches than versions pins: %s; move versions in kubeletconf/internal/flaggen/main.go", strings.Join(newer, ", "))
	}
	return nil
}

// errNoSources is returned (wrapped) by sources when offline and a module is not in
// the module cache.
var errNoSources = fmt.Errorf("not in the module cache")

// sources returns the source roots of a k8s.io/kubernetes release: the module and
// the k8s.io/component-base and k8s.io/klog/v2 releases it builds with.
func sources(version string, offline bool) ([]root, error) {
	k, err := download("k8s.io/kubernetes", version, offline)
	if err != nil {
		return nil, err
	}
	goMod, err := os.ReadFile(k + "/go.mod")
	if err != nil {
		return nil, err
	}
	// The staging modules are released as v0.<minor>.<patch> with the kubelet.
	cb, err := download("k8s.io/component-base", "v0."+strings.TrimPrefix(version, "v1."), offline)
	if err != nil {
		return nil, err
	}
	klogVersion, err := requirement(goMod, "k8s.io/klog/v2")
	if err != nil {
		return nil, fmt.Errorf("k8s.io/kubernetes %s go.mod: %w", version, err)
	}
	klog, err := download("k8s.io/klog/v2", klogVersion, offline)
	if err != nil {
		return nil, err
	}
	roots := []root{{"k8s.io/kubernetes", k}, {"k8s.io/component-base", cb}, {"k8s.io/klog/v2", klog}}
	// From 1.37 the kubelet names cadvisor's --housekeeping-interval by a constant of
	// github.com/google/cadvisor/lib/cadvisorflags.
	if v, err := requirement(goMod, cadvisorLib); err == nil {
		dir, err := download(cadvisorLib, v, offline)
		if err != nil {
			return nil, err
		}
		roots = append(roots, root{cadvisorLib, dir})
	}
	return roots, nil
}

const cadvisorLib = "github.com/google/cadvisor/lib"

// requirement returns the version of module that go.mod requires (the replace
// directive's, when there is one).
func requirement(goMod []byte, module string) (string, error) {
	re := regexp.MustCompile(`(?m)^\s*(?:require\s+|replace\s+)?` + regexp.QuoteMeta(module) + `\s+(?:=>\s+\S+\s+)?(v\S+)`)
	var last string
	for _, m := range re.FindAllSubmatch(goMod, -1) {
		last = string(m[1]) // a replace comes after the require
	}
	if last == "" {
		return "", fmt.Errorf("no requirement of %s", module)
	}
	return last, nil
}

// download returns the module cache directory of module@version, downloading it
// unless offline. It runs outside any module so that no go.mod or go.sum changes.
func download(module, version string, offline bool) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GO111MODULE=on", "GOFLAGS=-mod=mod")
	if offline {
		cmd.Env = append(cmd.Env, "GOPROXY=off")
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(stdout.Bytes(), &m); err != nil && runErr == nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", module, version, err)
	}
	if m.Dir == "" || runErr != nil {
		if offline {
			return "", fmt.Errorf("%s@%s is %w", module, version, errNoSources)
		}
		msg := strings.TrimSpace(cmp.Or(m.Error, stderr.String()))
		return "", fmt.Errorf("go mod download %s@%s: %s", module, version, msg)
	}
	return m.Dir, nil
}

// generate returns the formatted source of zz_generated_flags.go.
func generate(sets []versionFlags) ([]byte, error) {
	sort.Slice(sets, func(i, j int) bool { return sets[i].minor < sets[j].minor })
	return render(sets)
}
