package main

import (
	"os"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/internal/genfile"
)

const (
	goModFile = "../../../go.mod"
	goFile    = "../../zz_generated_types.go"
)

// TestGeneratedFileIsFresh regenerates the types in memory and compares them byte
// for byte with the committed file, so `make test` fails when go.mod moves
// k8s.io/kubelet to a version with other fields but the copy was not regenerated (or
// the file was edited by hand).
func TestGeneratedFileIsFresh(t *testing.T) {
	mod, err := os.ReadFile(goModFile)
	if err != nil {
		t.Fatal(err)
	}
	version, err := kubeletVersion(mod)
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(version)
	if err != nil {
		t.Fatal(err)
	}
	if err := genfile.WriteOrCheck(goFile, want, true, "k8s.io/kubelet changed", "make generate"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(want), "from k8s.io/kubelet "+version+";") {
		t.Errorf("the generated header does not name k8s.io/kubelet %s", version)
	}
}

func TestKubeletVersion(t *testing.T) {
	for _, tc := range []struct{ mod, want, wantErr string }{
		{"module x\n\nrequire (\n\tk8s.io/kubelet v0.37.2\n\tk8s.io/kubeletx v1.0.0\n)\n", "v0.37.2", ""},
		{"module x\nrequire k8s.io/kubelet v0.31.0 // indirect\n", "v0.31.0", ""},
		{"module x\nrequire k8s.io/kubeletx v0.31.0\n", "", "no requirement of k8s.io/kubelet"},
	} {
		got, err := kubeletVersion([]byte(tc.mod))
		if got != tc.want || (err == nil) != (tc.wantErr == "") || (err != nil && err.Error() != tc.wantErr) {
			t.Errorf("kubeletVersion(%q) = %q, %v; want %q, %q", tc.mod, got, err, tc.want, tc.wantErr)
		}
	}
}
