package bootstrap

import (
	"bytes"
	"encoding/base64"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/rootfs"
)

// withStatusDir makes a test root record the run's status (a root other than / does
// only when it has StatusDir).
func withStatusDir(t *testing.T) func(*Env) {
	return func(env *Env) { must(t, os.MkdirAll(filepath.Join(env.Root.Dir(), StatusDir), 0o755)) }
}

func readStatus(t *testing.T, dir string) *Status {
	t.Helper()
	root, err := rootfs.New(dir)
	must(t, err)
	s, err := ReadStatus(root)
	must(t, err)
	return s
}

// TestStatusRecordsTheRun: a run records when it ran, its inputs as names and
// digests, every file of the node with the digest of what is on disk, and ok; the CA
// never appears in it, and only kubelet-config.json and the kubeconfig are kept whole.
func TestStatusRecordsTheRun(t *testing.T) {
	c := base(t)
	before := time.Now().UTC()
	dir, err := runCaseWith(t, c, zap.NewNop(), withStatusDir(t))
	must(t, err)
	s := readStatus(t, dir)
	if s.Outcome != "ok" || s.Error != "" || s.Phase != "run" {
		t.Errorf("outcome %q, error %q, phase %q; want ok, none, run", s.Outcome, s.Error, s.Phase)
	}
	if s.Started.Before(before.Add(-time.Second)) || s.Finished.Before(s.Started) {
		t.Errorf("started %s, finished %s; the test began at %s", s.Started, s.Finished, before)
	}
	if s.Inputs.ClusterName == "" || s.Inputs.InstanceType != "m5.large" || len(s.Inputs.CASHA256) != 64 || s.Inputs.MaxPods != 29 {
		t.Errorf("inputs %+v: want the cluster name, m5.large, the CA's digest and max pods 29", s.Inputs)
	}
	if len(s.Files) < 5 {
		t.Fatalf("%d files recorded, want every file of the node", len(s.Files))
	}
	var whole []string
	for _, f := range s.Files {
		b, err := os.ReadFile(filepath.Join(dir, f.Path))
		if err != nil {
			t.Errorf("%s: recorded but not on disk: %v", f.Path, err)
			continue
		}
		if digest(b) != f.SHA256 || len(b) != f.Bytes {
			t.Errorf("%s: recorded sha256 %s (%d bytes), on disk %s (%d bytes)", f.Path, f.SHA256, f.Bytes, digest(b), len(b))
		}
		if f.Content != "" {
			whole = append(whole, f.Path)
			if f.Content != string(b) {
				t.Errorf("%s: the content kept is not the file", f.Path)
			}
		}
	}
	if want := []string{"/etc/kubernetes/kubelet/kubelet-config.json", "/var/lib/kubelet/kubeconfig"}; !slices.Equal(slices.Sorted(slices.Values(whole)), want) {
		t.Errorf("files kept whole %v, want %v", whole, want)
	}
	raw, err := os.ReadFile(filepath.Join(dir, StatusPath))
	must(t, err)
	ca, err := os.ReadFile(filepath.Join(dir, "etc/kubernetes/pki/ca.crt"))
	must(t, err)
	body := strings.Join(strings.Split(string(ca), "\n")[1:3], "")
	if bytes.Contains(raw, []byte("BEGIN CERTIFICATE")) || strings.Contains(string(raw), body) ||
		strings.Contains(string(raw), base64.StdEncoding.EncodeToString(ca)) {
		t.Errorf("the status holds the CA:\n%s", raw)
	}
}

// TestStatusRecordsAFailure: a run that fails before writing records the failure
// and its error, and writes nothing else.
func TestStatusRecordsAFailure(t *testing.T) {
	c := base(t)
	c.StartFor(t)
	srv, err := imdstest.NewServer(c.IMDS)
	must(t, err)
	t.Cleanup(func() { srv.Close() })
	srv.SetFaults("latest/api/token", imdstest.Fault{Kind: imdstest.FaultStatus, Status: 403})
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, StatusDir), 0o755))
	must(t, c.WriteFiles(dir))
	before := tree(t, dir)
	if err := runFaulty(c, srv, dir, 2*time.Second, nil); err == nil {
		t.Fatal("the run succeeded against an IMDS that refuses tokens")
	}
	s := readStatus(t, dir)
	if s.Outcome != "failed" || s.Error == "" || len(s.Files) != 0 {
		t.Errorf("outcome %q, error %q, %d files; want failed, the error, none", s.Outcome, s.Error, len(s.Files))
	}
	after := tree(t, dir)
	delete(after, strings.TrimPrefix(StatusPath, "/"))
	if !maps.Equal(after, before) {
		t.Errorf("the failed run changed files other than its status: %v", slices.Sorted(maps.Keys(after)))
	}
}

// TestNoStatusOutsideTheNodeWithoutItsDirectory: a root without /var/lib/eksboot
// (every test root, render's) gets no status, and a dry run records none.
func TestNoStatusOutsideTheNodeWithoutItsDirectory(t *testing.T) {
	c := base(t)
	dir, err := runCaseWith(t, c, zap.NewNop(), nil)
	must(t, err)
	if _, err := os.Stat(filepath.Join(dir, StatusDir)); !os.IsNotExist(err) {
		t.Errorf("%s exists after a run in a root without it: %v", StatusDir, err)
	}
	dir = t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, StatusDir), 0o755))
	root, err := rootfs.New(dir)
	must(t, err)
	recordStatus(&Env{Root: root, Log: zap.NewNop()}, &Config{Settings: Settings{DryRun: true}}, nil, nil, time.Now(), nil)
	if _, err := os.Stat(filepath.Join(dir, StatusPath)); !os.IsNotExist(err) {
		t.Errorf("a dry run recorded a status: %v", err)
	}
}

// TestReadStatusRefusesAKeyTwice: a status file that says a thing twice (the
// outcome, in two cases) is refused naming the key, not read with the last.
func TestReadStatusRefusesAKeyTwice(t *testing.T) {
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, StatusDir), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, StatusPath), []byte(`{"outcome": "failed", "Outcome": "ok"}`), 0o644))
	root, err := rootfs.New(dir)
	must(t, err)
	if s, err := ReadStatus(root); err == nil || !strings.Contains(err.Error(), StatusPath+": Outcome: a key given twice") {
		t.Errorf("ReadStatus = %+v, %v; want the key named", s, err)
	}
}
