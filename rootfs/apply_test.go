package rootfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// readTree returns the regular files under dir as relative path -> content.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	must(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return err
	}))
	return out
}

// sameTree fails the test unless the files under dir are exactly want.
func sameTree(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	got := readTree(t, dir)
	for k, w := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("%s: missing, want %q", k, w)
		} else if g != w {
			t.Errorf("%s = %q, want the old %q", k, g, w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: left behind", k)
		}
	}
}

// TestAFailedUpdateChangesNothing: one change of three cannot be staged (its directory
// is a file), so the node keeps every old file, and the file to remove stays (the
// code before this change wrote the good files and removed the stale one).
func TestAFailedUpdateChangesNothing(t *testing.T) {
	r := newRoot(t)
	old := map[string]string{"etc/ok": "old ok\n", "etc/stale": "stale\n", "blocker": "a file, not a folder"}
	for k, v := range old {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(r.Dir(), k)), 0o755))
		must(t, os.WriteFile(filepath.Join(r.Dir(), k), []byte(v), 0o644))
	}
	changes := []Change{
		{Path: "/etc/ok", Old: []byte("old ok\n"), New: []byte("new ok\n"), Mode: 0o644},
		{Path: "/etc/new", New: []byte("new\n"), Mode: 0o644},
		{Path: "/blocker/one", New: []byte("x"), Mode: 0o644},
		{Path: "/blocker/two", New: []byte("y"), Mode: 0o644},
		{Path: "/etc/stale", Old: []byte("stale\n"), Remove: true},
	}
	err := r.Apply(changes)
	if err == nil || !strings.Contains(err.Error(), "/blocker/one") || !strings.Contains(err.Error(), "/blocker/two") {
		t.Fatalf("err = %v, want both failed writes named", err)
	}
	sameTree(t, r.Dir(), old)
}

// TestStagedApplyUnderENOSPC fills a small tmpfs so that the second of two new files
// cannot be staged: Apply must fail with ENOSPC, every file must keep its old bytes,
// the file to remove must still exist and no temporary file may be left (the code
// before this change replaced the first file and removed the third). Root only: the
// test body runs in a re-executed test binary in its own mount namespace, which
// mounts the tmpfs (nothing leaks into the host's mounts, even on a crash).
func TestStagedApplyUnderENOSPC(t *testing.T) {
	if os.Getenv("EKSBOOT_ENOSPC_CHILD") == "1" {
		enospcChild(t)
		return
	}
	requireRoot(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestStagedApplyUnderENOSPC$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "EKSBOOT_ENOSPC_CHILD=1", "EKSBOOT_ENOSPC_DIR="+t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS} // Go makes / private in it
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestStagedApplyUnderENOSPC") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func enospcChild(t *testing.T) {
	mnt := os.Getenv("EKSBOOT_ENOSPC_DIR")
	must(t, syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=256k,mode=0755"))
	defer func() { _ = syscall.Unmount(mnt, syscall.MNT_DETACH) }()
	r, err := New(mnt)
	must(t, err)
	old := map[string]string{
		"etc/eks/containerd/config.toml":                 "sandbox = \"pause:3.8\"\n",
		"etc/kubernetes/kubelet/config.json":             "{\"old\": true}\n",
		"etc/systemd/system/kubelet.service.d/30-x.conf": "[Service]\nEnvironment=KUBELET_EXTRA_ARGS=--v=3\n",
	}
	for k, v := range old {
		must(t, r.WriteFile("/"+k, []byte(v), 0o644))
	}
	// Fill the file system, then free two pages: room for the first new file, not for
	// the second.
	filler, err := os.Create(filepath.Join(mnt, "filler"))
	must(t, err)
	chunk := make([]byte, 4096)
	for {
		if _, err := filler.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	st, err := filler.Stat()
	must(t, err)
	must(t, filler.Truncate(st.Size()-2*4096))
	must(t, filler.Close())
	filled := readTree(t, mnt)

	changes, err := r.Plan([]File{
		{Path: "/etc/eks/containerd/config.toml", Data: []byte("sandbox = \"pause:3.10\"\n"), Mode: 0o644},
		{Path: "/etc/kubernetes/kubelet/config.json", Data: []byte(fmt.Sprintf("{\"new\": %q}\n", strings.Repeat("x", 64<<10))), Mode: 0o644},
	}, []string{"/etc/systemd/system/kubelet.service.d/30-x.conf"})
	must(t, err)
	if len(changes) != 3 {
		t.Fatalf("plan: %d changes, want 3 (2 writes, 1 removal)", len(changes))
	}
	err = r.Apply(changes)
	sameTree(t, mnt, filled)
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "write /etc/kubernetes/kubelet/config.json: no space left on device") {
		t.Errorf("Apply on a full disk: %v, want ENOSPC naming config.json", err)
	}
}

// TestOwnerIsRepaired: a file with the right bytes and mode but another owner is a
// change (the code before this change saw none), and Apply gives it back to
// root:root. Root only.
func TestOwnerIsRepaired(t *testing.T) {
	requireRoot(t)
	r := newRoot(t)
	files := []File{{Path: "/etc/kubernetes/kubelet/config.json", Data: []byte("{}\n"), Mode: 0o644}}
	changes, err := r.Plan(files, nil)
	must(t, err)
	must(t, r.Apply(changes))
	hp := filepath.Join(r.Dir(), "etc/kubernetes/kubelet/config.json")
	must(t, os.Chown(hp, 1000, 1001))
	changes, err = r.Plan(files, nil)
	must(t, err)
	if len(changes) != 1 || !changes[0].Chown || changes[0].OldUID != 1000 || changes[0].OldGID != 1001 {
		t.Fatalf("plan after a chown to 1000:1001: %+v, want one owner change", changes)
	}
	if d, want := changes[0].Diff(), "(content unchanged; owner 1000:1001 becomes 0:0 (root:root), mode 0644)"; !strings.Contains(d, want) {
		t.Errorf("Diff() =\n%s\nwant %q", d, want)
	}
	must(t, r.Apply(changes))
	st, err := os.Stat(hp)
	must(t, err)
	if sys := st.Sys().(*syscall.Stat_t); sys.Uid != 0 || sys.Gid != 0 {
		t.Errorf("owner after Apply: %d:%d, want 0:0", sys.Uid, sys.Gid)
	}
	if again, err := r.Plan(files, nil); err != nil || len(again) != 0 {
		t.Errorf("plan after the repair: %+v, %v; want no change", again, err)
	}
}

// TestOnlyDeadWritersTempsAreRemoved: a write removes the temporary files of its file
// that a dead process (or an older eksboot, or this process) left, never those of a
// live one: the code before this change removed them all, and a concurrent run's
// rename failed with "no such file or directory".
func TestOnlyDeadWritersTempsAreRemoved(t *testing.T) {
	r := newRoot(t)
	dir := filepath.Join(r.Dir(), "etc/kubernetes/pki")
	must(t, os.MkdirAll(dir, 0o755))
	dead := exec.Command("true")
	must(t, dead.Run())
	// name -> want it kept: the dead run's and this process's temps go; an older
	// eksboot's (no PID) goes; a live PID's (1) and another file's stay.
	temps := map[string]bool{}
	temps[fmt.Sprintf(".ca.crt.eksboot-%d-123", dead.Process.Pid)] = false
	temps[fmt.Sprintf(".ca.crt.eksboot-%d-456", os.Getpid())] = false
	temps[".ca.crt.eksboot-789"] = false
	temps[".ca.crt.eksboot-1-999"] = true
	temps[fmt.Sprintf(".other.eksboot-%d-1", dead.Process.Pid)] = true
	for name := range temps {
		must(t, os.WriteFile(filepath.Join(dir, name), []byte("half"), 0o600))
	}
	must(t, r.WriteFile("/etc/kubernetes/pki/ca.crt", []byte("whole\n"), 0o644))
	for name, keep := range temps {
		_, err := os.Stat(filepath.Join(dir, name))
		if keep && err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
		if !keep && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s is stale but still there (%v)", name, err)
		}
	}
	left, err := filepath.Glob(filepath.Join(dir, fmt.Sprintf(".ca.crt.eksboot-%d-*", os.Getpid())))
	must(t, err)
	if len(left) != 0 {
		t.Errorf("this write left its temporary file: %v", left)
	}
}
