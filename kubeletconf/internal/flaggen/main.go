// Command flaggen writes kubeletconf/kubeletflags/zz_generated_flags.go: for each
// kubelet minor version 1.24 to 1.38, the command-line flags that version's kubelet
// registers, read from the sources of the k8s.io/kubernetes release that
// kubeletconf/internal/kubesrc pins for it (the newest patch of the minor the Go module
// proxy serves; for 1.38 the pre-release v1.38.0-beta.0).
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
// A flag is boolean (it takes no value: pflag's NoOptDefVal is set) when it is
// registered by a Bool or Count method, when it is a standard library flag whose
// value's IsBoolFlag returns true (pflag.PFlagFromGoFlag then sets NoOptDefVal), or when
// NoOptDefVal is set on it by name. The flags the kubelet takes from the global flag
// sets by name (cadvisor's, the credential providers', --version) are looked up where
// their packages define them in package initialisation (globals.go): the packages
// the options package imports for that (import _ "..."), and verflag.
//
// Checked against real kubelets (kubeletflags' TestAgreesWithARealKubelet and the
// FLAG: lines a kubelet logs at --v=1 for every flag it has, deprecated ones
// included): 1.24.17 and 1.34.4 built from their modules, 164 and 150 flags, and a
// 1.37.2 release build's --help, 131; each the same names and deprecations. .ci/run
// holds the table, boolean flags included, to every kubelet the e2e boxes build.
//
// The generator downloads the modules into the module cache with `go mod download`
// (they are not in eksboot's go.mod: eksboot never links them); `go generate
// ./kubeletconf/kubeletflags` runs it; with -check it only reports whether the file is
// up to date, and -offline uses only the module cache.
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"

	"github.com/eksboot/eksboot/internal/genfile"
	"github.com/eksboot/eksboot/kubeletconf/internal/kubesrc"
)

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
		listed, err := kubesrc.ListVersions()
		if err != nil {
			return err
		}
		if err := kubesrc.NewerServed(kubesrc.Versions, listed); err != nil {
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

// extractAll reads the flags of every release of kubesrc.Versions.
func extractAll(offline bool, report func(version string, unfollowed []string)) ([]versionFlags, error) {
	var sets []versionFlags
	for _, v := range kubesrc.Versions {
		roots, err := sources(v, offline)
		if err != nil {
			return nil, err
		}
		flags, unfollowed, err := extract(roots)
		if err != nil {
			return nil, fmt.Errorf("k8s.io/kubernetes %s: %w", v, err)
		}
		report(v, unfollowed)
		minor, err := kubesrc.Minor(v)
		if err != nil {
			return nil, err
		}
		sets = append(sets, versionFlags{minor: minor, version: v, flags: flags})
	}
	return sets, nil
}

// sources returns the source roots of a k8s.io/kubernetes release: the module and
// the k8s.io/component-base and k8s.io/klog/v2 releases it builds with.
func sources(version string, offline bool) ([]root, error) {
	k, err := kubesrc.Download("k8s.io/kubernetes", version, offline)
	if err != nil {
		return nil, err
	}
	goMod, err := os.ReadFile(k + "/go.mod")
	if err != nil {
		return nil, err
	}
	// The staging modules are released as v0.<minor>.<patch> with the kubelet.
	cb, err := kubesrc.Download("k8s.io/component-base", kubesrc.Staging(version), offline)
	if err != nil {
		return nil, err
	}
	klogVersion, err := kubesrc.Requirement(goMod, "k8s.io/klog/v2")
	if err != nil {
		return nil, fmt.Errorf("k8s.io/kubernetes %s go.mod: %w", version, err)
	}
	klog, err := kubesrc.Download("k8s.io/klog/v2", klogVersion, offline)
	if err != nil {
		return nil, err
	}
	roots := []root{{"k8s.io/kubernetes", k}, {"k8s.io/component-base", cb}, {"k8s.io/klog/v2", klog}}
	// cadvisor defines the flags the kubelet takes from the global flag set; from 1.37
	// the kubelet names the one left, --housekeeping-interval, by a constant of
	// github.com/google/cadvisor/lib/cadvisorflags.
	for _, m := range []string{cadvisor, cadvisor + "/lib"} {
		if v, err := kubesrc.Requirement(goMod, m); err == nil {
			dir, err := kubesrc.Download(m, v, offline)
			if err != nil {
				return nil, err
			}
			roots = append(roots, root{m, dir})
		}
	}
	return roots, nil
}

const cadvisor = "github.com/google/cadvisor"

// generate returns the formatted source of zz_generated_flags.go.
func generate(sets []versionFlags) ([]byte, error) {
	sort.Slice(sets, func(i, j int) bool { return sets[i].minor < sets[j].minor })
	return render(sets)
}
