package main

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/internal/genfile"
	"github.com/eksboot/eksboot/kubeletconf/internal/kubesrc"
)

const goFile = "../../kubeletflags/zz_generated_flags.go"

// requireSources makes a missing source an error instead of a skip (CI sets it
// after `go mod download` of the versions; see TestGeneratedFileIsFresh).
const requireSources = "EKSBOOT_REQUIRE_KUBELET_SOURCES"

// TestGeneratedFileIsFresh extracts every version's flags again from the module cache
// and compares the generated file byte for byte with the committed one, so `make
// test` fails when the extractor or the versions changed but the file was not
// regenerated (or it was edited by hand).
//
// The k8s.io/kubernetes releases are not in eksboot's go.mod, so a fresh clone's
// module cache has none of them, and the test never downloads (that is `make
// generate`'s job): when a release is missing it skips, naming it, unless
// EKSBOOT_REQUIRE_KUBELET_SOURCES=1 says the sources must be there.
func TestGeneratedFileIsFresh(t *testing.T) {
	sets, err := extractAll(true, func(string, []string) {})
	if errors.Is(err, kubesrc.ErrNoSources) && os.Getenv(requireSources) != "1" {
		t.Skipf("the kubelet sources are not in the module cache (%v); `make generate` downloads them, and %s=1 makes this a failure", err, requireSources)
	}
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(sets)
	if err != nil {
		t.Fatal(err)
	}
	if err := genfile.WriteOrCheck(goFile, want, true, "the kubelet versions or the extractor changed", "make generate"); err != nil {
		t.Fatal(err)
	}
	if again, _ := generate(sets); !bytes.Equal(again, want) {
		t.Error("generate is not deterministic")
	}
}

// TestExtractFindsEveryKindOfRegistration runs the extractor on testdata/src, a tiny
// tree with each way the kubelet's sources register a flag.
func TestExtractFindsEveryKindOfRegistration(t *testing.T) {
	flags, unfollowed, err := extract(testRoots("testdata/src/kubernetes"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]flagInfo{
		"runtime-cgroups":       {},                                // a method of an embedded struct of another package
		"node-ip":               {},                                // a constant expression as the name
		"old-style":             {deprecated: true},                // '_' normalised; MarkDeprecated
		"seccomp-default":       {boolean: true},                   // BoolVar
		"lock-file":             {boolean: true},                   // Var, then Lookup(name).NoOptDefVal = ...
		"feature-gates":         {},                                // fs.Var
		"max-pods":              {hidden: true},                    // Int32VarP; MarkHidden
		"logging-format":        {},                                // component-base logs/api/v1
		"log-flush-frequency":   {},                                // an imported constant as the name
		"v":                     {},                                // VarP of pflag; klog's go flag Var of a Level
		"housekeeping-interval": {},                                // register(global, local, name) of a flag.Duration of cadvisor
		"boot-id-file":          {deprecated: true},                // registerDeprecated; flag.StringVar in an init of a package cadvisor's imports
		"enable-load-reader":    {deprecated: true, boolean: true}, // registerDeprecated of a flag.Bool
		"version":               {boolean: true},                   // AddFlag(flag.Lookup(name)) of a pflag global whose NoOptDefVal is set
		"log-dir":               {deprecated: true},                // klog's, copied by logs.AddFlags' VisitAll and deprecated there
		"logtostderr":           {deprecated: true, boolean: true}, // klog's go flag BoolVar, copied
		"one-output":            {deprecated: true, boolean: true}, // klog's go flag Var of a value whose IsBoolFlag returns true
		"help":                  {boolean: true},                   // NewKubeletCommand's own BoolP
	}
	if !reflect.DeepEqual(flags, want) {
		for n, i := range flags {
			if w, ok := want[n]; !ok || w != i {
				t.Errorf("got %s %+v, want %+v (listed: %v)", n, i, w, ok)
			}
		}
		for n := range want {
			if _, ok := flags[n]; !ok {
				t.Errorf("missing %s", n)
			}
		}
	}
	if len(unfollowed) != 0 {
		t.Errorf("unfollowed calls: %v", unfollowed)
	}
}

func TestExtractFailsOnANameItCannotRead(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, "testdata/src/kubernetes", dir)
	path := dir + "/pkg/kubelet/config/flags.go"
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	src = bytes.Replace(src, []byte(`"runtime-cgroups"`), []byte(`runtimeCgroupsFlag()`), 1)
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = extract(testRoots(dir))
	if err == nil || !strings.Contains(err.Error(), "runtimeCgroupsFlag(...) is not a string constant") {
		t.Errorf("extract error = %v, want one naming runtimeCgroupsFlag(...)", err)
	}
}

// TestExtractFailsOnAGlobalFlagNobodyDefines: a register helper's name must be defined
// by a package the options package imports for it.
func TestExtractFailsOnAGlobalFlagNobodyDefines(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, "testdata/src/kubernetes", dir)
	path := dir + "/cmd/kubelet/app/options/globalflags.go"
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	src = bytes.Replace(src, []byte(`"boot_id_file"`), []byte(`"machine_id_file"`), 1)
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = extract(testRoots(dir))
	if err == nil || !strings.Contains(err.Error(), "flag's global flag machine_id_file, registered by registerDeprecated, is defined by none of the packages") {
		t.Errorf("extract error = %v, want one naming machine_id_file", err)
	}
}

// testRoots returns the roots of testdata/src, with k8s.io/kubernetes at kubernetes.
func testRoots(kubernetes string) []root {
	return []root{
		{"k8s.io/kubernetes", kubernetes},
		{"k8s.io/component-base", "testdata/src/component-base"},
		{"k8s.io/klog/v2", "testdata/src/klog"},
		{"github.com/google/cadvisor", "testdata/src/cadvisor"},
	}
}

// copyTree copies the regular files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}
