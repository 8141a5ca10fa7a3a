package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSedHookLeavesBinary: eksctl's maxPodsPerNode hook edits /etc/eks/bootstrap.sh
// with sed -i. On an image where that path is the eksboot binary (a copy, or the old
// symlink, which sed -i replaces by a copy), the hook must find nothing to change: the
// binary keeps its bytes and still runs as bootstrap.sh.
func TestSedHookLeavesBinary(t *testing.T) {
	sed, err := exec.LookPath("sed")
	if err != nil {
		t.Skip("sed is missing")
	}
	orig, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "etc", "eks", "bootstrap.sh")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, orig, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(sed, "-i", `s/KUBELET_EXTRA_ARGS=$2/KUBELET_EXTRA_ARGS="$2 --max-pods=142"/`, p).CombinedOutput(); err != nil {
		t.Fatalf("sed: %v\n%s", err, out)
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, orig) {
		t.Fatal("the sed hook changed the binary installed as /etc/eks/bootstrap.sh")
	}
	out, err := exec.Command(p, "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "CLUSTER_NAME") {
		t.Fatalf("bootstrap.sh --help after the hook: %v\n%s", err, out)
	}
}
