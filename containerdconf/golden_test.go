package containerdconf

import (
	"flag"
	"os"
	"testing"

	"github.com/eksboot/eksboot/internal/testtools"
)

// update rewrites eksboot's own golden files (testdata/containerd/). The
// bootstrap.sh reference outputs in testdata/bootstrap-sh/ are never rewritten.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/containerd/ from the current output")

// bootstrapDir holds the containerd config.toml that bootstrap.sh wrote for each
// golden case, copied from the project's shared golden outputs (see
// ../kubeletconf/testdata/README.md, which describes the same cases).
const bootstrapDir = "testdata/bootstrap-sh"

// containerdPath is the path, relative to a case folder, of bootstrap.sh's file.
const containerdPath = "etc/containerd/config.toml"

const pauseUSW2 = "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/pause:3.5"

// goldenCase is what containerd's file of a bootstrap.sh golden case depends on:
// its sandbox image (the cases of kubeletconf's goldenCases, by the same names).
type goldenCase struct {
	name       string
	pauseImage string
}

// goldenCases lists every case of testdata/bootstrap-sh.
var goldenCases = []goldenCase{
	{"01-m5large-usw2-vpc192", pauseUSW2},
	{"02-m5large-usw2-vpc10", pauseUSW2},
	{"03-dnsip-nomaxpods-extraargs", pauseUSW2},
	{"05-t3.micro", pauseUSW2},
	{"07-cn-north-1", "918309763551.dkr.ecr.cn-north-1.amazonaws.com.cn/eks/pause:3.5"},
	{"09-eksctl-mng", pauseUSW2},
	{"10-ipv6", pauseUSW2},
	{"12-extra-args-quotes", pauseUSW2},
	{"13-pause-account-version", "123456789012.dkr.ecr.us-west-2.amazonaws.com/eks/pause:3.9"},
	{"15-service-ipv4-cidr", pauseUSW2},
	{"17-dnsip-list", pauseUSW2},
	{"36-use-max-pods-false", pauseUSW2},
}

// TestGoldenCasesCovered fails when testdata/bootstrap-sh gains a case that
// goldenCases does not list (or the other way round).
func TestGoldenCasesCovered(t *testing.T) {
	entries, err := os.ReadDir(bootstrapDir)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, c := range goldenCases {
		listed[c.name] = true
	}
	for _, e := range entries {
		if e.IsDir() && !listed[e.Name()] {
			t.Errorf("case %s in %s is not in goldenCases", e.Name(), bootstrapDir)
		}
		delete(listed, e.Name())
	}
	for name := range listed {
		t.Errorf("case %s of goldenCases has no folder in %s", name, bootstrapDir)
	}
}

// readTestdata returns the content of path, failing the test if it cannot be read.
func readTestdata(t *testing.T, path string) []byte { t.Helper(); return testtools.ReadFile(t, path) }

// checkGolden compares got with the golden file path, or rewrites it with -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	testtools.CheckGolden(t, path, got, *update)
}
