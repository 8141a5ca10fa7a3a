// Command gategen writes kubeletconf/kubeletgates/zz_generated_gates.go: for each
// kubelet minor version 1.24 to 1.38, every feature gate that version's kubelet
// binary registers, with the stage, default and lock it has for a kubelet of that
// version, read from the sources of the k8s.io/kubernetes release that
// kubeletconf/internal/kubesrc pins for the minor (for 1.38 the pre-release
// v1.38.0-beta.0) and of the staging modules (k8s.io/apiserver, k8s.io/client-go,
// k8s.io/component-base, ...) released with it.
//
// The sources are parsed with go/ast, never built or run (extract.go says how the
// registrations are found). A gate's spec for kubelet 1.N: before 1.31 its one
// FeatureSpec; from 1.31 featuregate holds a list of specs by version and picks one
// by the gate's emulation version, which for the kubelet is its binary version
// (component-base's DefaultKubeBinaryVersion: the generator checks that it is 1.N and
// that the kubelet's command does not change it): the last spec whose Version is at
// most 1.N and, from 1.35, whose MinCompatibilityVersion is at most the minimum
// compatibility version, 1.(N-1) (the kubelet has no flag to change it). A gate whose
// every spec is newer is registered but pre-alpha: featuregate refuses to set it
// ("feature is PreAlpha at emulated version"), as the kubelet's --help leaves it out.
//
// The generator downloads the modules into the module cache with `go mod download`
// (they are not in eksboot's go.mod: eksboot never links them); `go generate
// ./kubeletconf/kubeletgates` runs it; with -check it only reports whether the file is
// up to date, and -offline uses only the module cache. -v lists, per version, the
// registrations found and the modules of the kubelet's import graph it did not read.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"

	"github.com/eksboot/eksboot/internal/genfile"
	"github.com/eksboot/eksboot/kubeletconf/internal/kubesrc"
)

func main() {
	out := flag.String("out", "", "the Go file to write")
	check := flag.Bool("check", false, "write nothing; fail when -out differs from what would be generated")
	offline := flag.Bool("offline", false, "use only the module cache (GOPROXY=off)")
	verbose := flag.Bool("v", false, "report, per version, the registrations found and the modules not read")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: gategen -out zz_generated_gates.go [-check] [-offline] [-v]")
		os.Exit(2)
	}
	if err := run(*out, *check, *offline, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "gategen:", err)
		os.Exit(1)
	}
}

// run extracts every version's gates and writes (or checks) out.
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
	minors, err := extractAll(offline, func(v string, r *release) {
		if verbose {
			fmt.Fprintf(os.Stderr, "%s: %d packages read, %d gates\n", v, r.packages, len(r.gates))
			for _, s := range r.sites {
				fmt.Fprintf(os.Stderr, "%s: registration %s\n", v, s)
			}
			fmt.Fprintf(os.Stderr, "%s: modules not read: %v\n", v, r.modules)
		}
	})
	if err != nil {
		return err
	}
	src, err := render(minors)
	if err != nil {
		return err
	}
	return genfile.WriteOrCheck(out, src, check, "the kubelet versions or the extractor changed", "make generate")
}

// extractAll reads the gates of every release of kubesrc.Versions, as many at once
// as there are CPUs.
func extractAll(offline bool, report func(version string, r *release)) ([]minorGates, error) {
	type result struct {
		r     *release
		gates map[string]gate
		err   error
	}
	results := make([]result, len(kubesrc.Versions))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, v := range kubesrc.Versions {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			res := &results[i]
			minor, err := kubesrc.Minor(v)
			if err != nil {
				res.err = err
				return
			}
			l, err := sources(v, offline)
			if err != nil {
				res.err = err
				return
			}
			if res.r, err = extract(l); err != nil {
				res.err = fmt.Errorf("k8s.io/kubernetes %s: %w", v, err)
				return
			}
			if res.gates, err = effective(res.r, minor); err != nil {
				res.err = fmt.Errorf("k8s.io/kubernetes %s: %w", v, err)
			}
		}()
	}
	wg.Wait()
	var out []minorGates
	for i, v := range kubesrc.Versions {
		if results[i].err != nil {
			return nil, results[i].err
		}
		report(v, results[i].r)
		minor, _ := kubesrc.Minor(v)
		out = append(out, minorGates{minor: minor, version: v, gates: results[i].gates})
	}
	return out, nil
}

// sources returns a loader of a k8s.io/kubernetes release and of its staging modules,
// each downloaded when the extractor first needs it.
func sources(version string, offline bool) (*loader, error) {
	k, err := kubesrc.Download("k8s.io/kubernetes", version, offline)
	if err != nil {
		return nil, err
	}
	goMod, err := os.ReadFile(k + "/go.mod")
	if err != nil {
		return nil, err
	}
	mods := []*module{{path: "k8s.io/kubernetes", dir: k}}
	for _, m := range kubesrc.StagingModules(goMod) {
		mods = append(mods, &module{path: m})
	}
	return newLoader(mods, func(m string) (string, error) {
		return kubesrc.StagingDownload(m, version, offline)
	}), nil
}
