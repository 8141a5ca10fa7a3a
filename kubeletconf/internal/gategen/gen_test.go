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

const goFile = "../../kubeletgates/zz_generated_gates.go"

// requireSources makes a missing source an error instead of a skip (CI sets it
// after gategen -check has downloaded the modules).
const requireSources = "EKSBOOT_REQUIRE_KUBELET_SOURCES"

// TestGeneratedFileIsFresh extracts every version's gates again from the module
// cache and compares the generated file byte for byte with the committed one, so
// `make test` fails when the extractor or the versions changed but the file was not
// regenerated (or it was edited by hand).
//
// The k8s.io/kubernetes releases and their staging modules are not in eksboot's
// go.mod, so a fresh clone's module cache has none of them, and the test never
// downloads (that is `make generate`'s job): when a module is missing it skips,
// naming it, unless EKSBOOT_REQUIRE_KUBELET_SOURCES=1 says the sources must be there.
func TestGeneratedFileIsFresh(t *testing.T) {
	minors, err := extractAll(true, func(string, *release) {})
	if errors.Is(err, kubesrc.ErrNoSources) && os.Getenv(requireSources) != "1" {
		t.Skipf("the kubelet sources are not in the module cache (%v); `make generate` downloads them, and %s=1 makes this a failure", err, requireSources)
	}
	if err != nil {
		t.Fatal(err)
	}
	want, err := render(minors)
	if err != nil {
		t.Fatal(err)
	}
	if err := genfile.WriteOrCheck(goFile, want, true, "the kubelet versions or the extractor changed", "make generate"); err != nil {
		t.Fatal(err)
	}
	if again, _ := render(minors); !bytes.Equal(again, want) {
		t.Error("render is not deterministic")
	}
}

// testLoader returns a loader of testdata/src, with k8s.io/kubernetes at kubernetes.
func testLoader(kubernetes string) *loader {
	mods := []*module{{path: "k8s.io/kubernetes", dir: kubernetes}}
	for _, m := range []string{"apiserver", "component-base", "client-go"} {
		mods = append(mods, &module{path: "k8s.io/" + m, dir: "testdata/src/" + m})
	}
	return newLoader(mods, func(m string) (string, error) { return "", errors.New("no fetch in tests: " + m) })
}

// TestExtractFindsEveryKindOfRegistration runs the extractor on testdata/src, a tiny
// tree with each way the kubelet's sources register a gate, as a kubelet 1.30.
func TestExtractFindsEveryKindOfRegistration(t *testing.T) {
	r, err := extract(testLoader("testdata/src/kubernetes"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := effective(r, 30)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]gate{
		"AllAlpha":           {stage: "alpha"},                    // featuregate's defaultFeatures
		"AllBeta":            {stage: "beta"},                     //
		"Old":                {stage: "deprecated", locked: true}, // the last spec at 1.30
		"Graduated":          {stage: "beta", def: true},          // a sum of strings as the name; MajorMinor; GA only at 1.31
		"Later":              {unavailable: true},                 // every spec newer than 1.30: pre-alpha
		"Compat":             {stage: "beta"},                     // the spec for --min-compatibility-version=1.30 not in effect at 1.29
		"Generic":            {stage: "beta", def: true},          // k8s.io/apiserver's init and k8s.io/kubernetes' table, the same spec
		"LoggingBetaOptions": {stage: "beta", def: true},          // AddFeatureGates(gate), a table returned by a function
		"ClientThing":        {stage: "beta", def: true},          // client-go's, through pkg/features' adapter
	}
	if !reflect.DeepEqual(got, want) {
		for n, g := range got {
			if w, ok := want[n]; !ok || w != g {
				t.Errorf("got %s %+v, want %+v (listed: %v)", n, g, w, ok)
			}
		}
		for n := range want {
			if _, ok := got[n]; !ok {
				t.Errorf("missing %s", n)
			}
		}
	}
	if !r.versioned || r.binary != (ver{1, 30}) {
		t.Errorf("versioned %v at %v, want true at 1.30", r.versioned, r.binary)
	}
	if _, err := effective(r, 31); err == nil || !strings.Contains(err.Error(), "DefaultKubeBinaryVersion is 1.30, not 1.31") {
		t.Errorf("effective at 1.31 = %v, want an error naming DefaultKubeBinaryVersion", err)
	}
}

// TestExtractFails changes one file of testdata/src at a time: each change must make
// the extractor fail with an error naming what it cannot know.
func TestExtractFails(t *testing.T) {
	for _, tc := range []struct {
		name, file, old, new, want string
	}{
		{
			"a value that is not a constant", "pkg/features/kube_features.go",
			`Default: true, PreRelease: featuregate.GA}`, `Default: isOn(), PreRelease: featuregate.GA}`,
			"isOn(...) is not a constant the generator can read",
		},
		{
			"a name that is not a constant", "pkg/features/kube_features.go",
			`Later     featuregate.Feature = "Later"`, `Later     featuregate.Feature = featuregate.Feature(laterName)`,
			"laterName is not a constant the generator can read",
		},
		{
			"a registration outside package initialisation", "cmd/kubelet/app/server.go",
			`_ = utilfeature.DefaultMutableFeatureGate.SetFromMap(nil)`, `_ = utilfeature.DefaultMutableFeatureGate.AddVersioned(nil)`,
			"utilfeature.DefaultMutableFeatureGate.AddVersioned outside package initialisation",
		},
		{
			"the gate passed to a function outside package initialisation", "cmd/kubelet/app/server.go",
			`_ = utilfeature.DefaultMutableFeatureGate.SetFromMap(nil)`, `_ = logsapi.AddFeatureGates(utilfeature.DefaultMutableFeatureGate)`,
			"passed to logsapi.AddFeatureGates outside package initialisation",
		},
		{
			"a registration on a field of a value made from the gate", "pkg/features/kube_features.go",
			`clientfeatures.ReplaceFeatureGates(ca)`, `ca.mfg.AddVersioned(nil)`,
			"nil is not a feature gate table the generator can read",
		},
		{
			"a gate registered twice, differently", "pkg/features/kube_features.go",
			`{Version: version.MustParse("1.20"), Default: true, PreRelease: featuregate.Beta},`,
			`{Version: version.MustParse("1.20"), Default: false, PreRelease: featuregate.Beta},`,
			"gate Generic registered again with other specs",
		},
		{
			"an unknown Add method", "pkg/features/kube_features.go",
			`AddDependencies(nil)`, `AddFeatures(nil)`,
			"utilfeature.DefaultMutableFeatureGate.AddFeatures on the kubelet's feature gate",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS("testdata/src/kubernetes")); err != nil {
				t.Fatal(err)
			}
			path := dir + "/" + tc.file
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			changed := bytes.Replace(src, []byte(tc.old), []byte(tc.new), 1)
			if bytes.Equal(changed, src) {
				t.Fatalf("%s holds no %q", tc.file, tc.old)
			}
			if err := os.WriteFile(path, changed, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = extract(testLoader(dir))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("extract error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
