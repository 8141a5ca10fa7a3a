//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// box is one node: an overlay of the cached root (read-only, shared by every box)
// and a folder of its own, booted with systemd-nspawn. Everything a boot writes
// lands in dir/upper, which outlives the boot, so the same box can boot again.
type box struct {
	t       *testing.T
	name    string // the machine name, unique per box
	dir     string // host folder: upper, work, root, containerd, console.log
	root    string // the mounted overlay, the box's /
	nspawn  *exec.Cmd
	exited  chan struct{}
	leader  int // PID of the box's systemd, as the host sees it
	console *os.File
	boots   int
	cgroups []string // the box's own cgroups, one per hierarchy
}

func newBox(t *testing.T, name, base string) *box {
	dir := filepath.Join(os.TempDir(), "eksboot-e2e", name)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	b := &box{t: t, name: name, dir: dir, root: filepath.Join(dir, "root")}
	for _, d := range []string{"upper", "work", "root", "containerd"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	opts := "lowerdir=" + base + ",upperdir=" + filepath.Join(dir, "upper") + ",workdir=" + filepath.Join(dir, "work")
	if err := syscall.Mount("overlay", b.root, "overlay", 0, opts); err != nil {
		t.Fatalf("mount the box's root: %v", err)
	}
	t.Cleanup(func() {
		b.stop()
		if err := syscall.Unmount(b.root, 0); err != nil {
			t.Errorf("unmount %s: %v", b.root, err)
		}
		if t.Failed() || os.Getenv("EKSBOOT_E2E_KEEP") == "1" {
			t.Logf("box kept in %s (the root is dir/upper over the cached root)", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	return b
}

// write puts a file into the box's root.
func (b *box) write(p string, mode os.FileMode, text string) {
	b.t.Helper()
	full := filepath.Join(b.root, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(text), mode); err != nil {
		b.t.Fatal(err)
	}
}

// enable links a unit of /etc/systemd/system into target.wants, as systemctl enable does.
func (b *box) enable(unit, target string) {
	b.t.Helper()
	dir := filepath.Join(b.root, "etc/systemd/system", target+".wants")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.Symlink("/etc/systemd/system/"+unit, filepath.Join(dir, unit)); err != nil {
		b.t.Fatal(err)
	}
}

// boot starts the box and waits until systemd has finished booting it, returning
// what `systemctl is-system-running` said then.
func (b *box) boot(ctx context.Context) string {
	b.t.Helper()
	b.boots++
	console, err := os.Create(filepath.Join(b.dir, fmt.Sprintf("console-%d.log", b.boots)))
	if err != nil {
		b.t.Fatal(err)
	}
	b.console = console
	args := []string{
		"--quiet", "--boot", "--register=no", "--keep-unit", "--private-network",
		"--machine=" + b.name, "--directory=" + b.root, "--console=pipe",
		// containerd's overlayfs snapshotter cannot work on an overlay: its own folder
		// is on the host's file system.
		"--bind=" + filepath.Join(b.dir, "containerd") + ":/var/lib/containerd",
		// The kubelet's OOM watcher reads the kernel log (nspawn drops CAP_SYSLOG).
		"--bind-ro=/dev/kmsg", "--capability=CAP_SYSLOG",
		// runc gives each container a session keyring; nspawn refuses the keyring
		// calls (EPERM: keyrings are not namespaced), which a VM's runc has.
		"--system-call-filter=add_key keyctl request_key",
	}
	// The kubelet (protectKernelDefaults) wants these kernel settings, which an
	// EKS AMI sets. They are the host's, not the box's: the box sees files with the
	// wanted values instead (a source in /proc is read inside the box).
	for _, s := range kernelSettings {
		args = append(args, "--bind-ro=/etc/e2e/sysctl/"+filepath.Base(s.path)+":"+s.path)
	}
	// A cgroup of its own in every hierarchy: with --keep-unit the box's systemd
	// works in nspawn's own cgroup, so boxes started side by side from this process
	// would share their units' cgroups (one box's stop removed another's
	// system.slice/containerd.service, which then failed to start).
	cgroups, err := ownCgroups(b.name)
	if err != nil {
		b.t.Fatal(err)
	}
	b.cgroups = cgroups
	b.nspawn = exec.Command("sh", append([]string{
		"-c",
		`for d in $E2E_CGROUPS; do echo $$ >"$d/cgroup.procs" || exit 1; done; exec systemd-nspawn "$@"`, "sh",
	}, args...)...)
	b.nspawn.Env = append(os.Environ(), "E2E_CGROUPS="+strings.Join(cgroups, " "))
	b.nspawn.Stdout = console
	b.nspawn.Stderr = console
	b.nspawn.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := b.nspawn.Start(); err != nil {
		b.t.Fatalf("systemd-nspawn: %v", err)
	}
	b.exited = make(chan struct{})
	go func() {
		_ = b.nspawn.Wait()
		close(b.exited)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for b.leader = 0; b.leader == 0; b.leader = childOf(b.nspawn.Process.Pid) {
		select {
		case <-b.exited:
			b.t.Fatalf("systemd-nspawn exited: %s\n%s", b.nspawn.ProcessState, b.consoleTail())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("no systemd in the box after 30s\n%s", b.consoleTail())
		}
	}
	// --wait: until the boot's jobs are done, whatever the outcome.
	for {
		out, err := b.execCtx(ctx, "systemctl", "is-system-running", "--wait")
		state := strings.TrimSpace(out)
		switch state {
		case "running", "degraded", "maintenance", "stopping":
			return state
		}
		if ctx.Err() != nil {
			b.t.Fatalf("box did not finish booting: %v (%q)\n%s", err, state, b.consoleTail())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// stop powers the box off (nspawn forwards SIGTERM as a poweroff to the box's
// systemd) and waits for it, killing it after a minute.
func (b *box) stop() {
	if b.nspawn == nil || b.nspawn.Process == nil {
		return
	}
	defer func() {
		b.nspawn = nil
		b.console.Close()
		for _, d := range b.cgroups {
			removeCgroup(d)
		}
	}()
	select {
	case <-b.exited:
		return
	default:
	}
	_ = b.nspawn.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
	case <-time.After(time.Minute):
		b.t.Errorf("box %s did not power off in a minute; killed", b.name)
		_ = b.nspawn.Process.Kill()
		<-b.exited
	}
}

// exec runs a command inside the running box (its mount, UTS, IPC, network and PID
// namespaces) and returns its combined output.
func (b *box) exec(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return b.execCtx(ctx, args...)
}

func (b *box) execCtx(ctx context.Context, args ...string) (string, error) {
	ns := []string{"--target=" + strconv.Itoa(b.leader), "--mount", "--uts", "--ipc", "--net", "--pid", "--"}
	out, err := exec.CommandContext(ctx, "nsenter", append(ns, args...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("in the box: %s: %w: %s", strings.Join(args, " "), err, tail(string(out), 20))
	}
	return string(out), nil
}

// hostInNet runs a host binary in the box's network namespace only (kubectl, with
// the host's files).
func (b *box) hostInNet(ctx context.Context, args ...string) (string, error) {
	ns := []string{"--target=" + strconv.Itoa(b.leader), "--net", "--"}
	cmd := exec.CommandContext(ctx, "nsenter", append(ns, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w: %s", filepath.Base(args[0]), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// journal returns the box's journal of this boot (or of one unit).
func (b *box) journal(unit string) string {
	args := []string{"journalctl", "--boot", "--no-pager", "--output=short-monotonic"}
	if unit != "" {
		args = append(args, "--unit="+unit)
	}
	out, err := b.exec(args...)
	if err != nil {
		return fmt.Sprintf("(journal: %v)", err)
	}
	return out
}

// saveJournal keeps the whole journal of this boot in the box's folder for a
// failed test, and returns the path.
func (b *box) saveJournal() string {
	p := filepath.Join(b.dir, fmt.Sprintf("journal-%d.txt", b.boots))
	if err := os.WriteFile(p, []byte(b.journal("")), 0o644); err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	return p
}

func (b *box) consoleTail() string {
	if b.console == nil {
		return ""
	}
	out, err := os.ReadFile(b.console.Name())
	if err != nil {
		return err.Error()
	}
	return "console:\n" + tail(string(out), 60)
}

// childOf returns the PID of a child process of pid named systemd, or 0.
func childOf(pid int) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ")".
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		j := strings.IndexByte(s, '(')
		if i < 0 || j < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) < 2 || fields[1] != strconv.Itoa(pid) || s[j+1:i] != "systemd" {
			continue
		}
		return child
	}
	return 0
}

// ownCgroups makes a cgroup named eksboot-e2e-<name> under this process's cgroup in
// every cgroup hierarchy mounted here and returns their folders.
func ownCgroups(name string) ([]string, error) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	paths := map[string]string{} // "memory", "name=systemd", "" (v2) -> path
	for _, l := range strings.Split(strings.TrimSpace(string(self)), "\n") {
		if f := strings.SplitN(l, ":", 3); len(f) == 3 {
			for _, c := range strings.Split(f[1], ",") {
				paths[c] = f[2]
			}
		}
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, l := range strings.Split(strings.TrimSpace(string(mounts)), "\n") {
		pre, post, ok := strings.Cut(l, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 {
			continue
		}
		root, point := f[3], f[4]
		var path string
		switch g[0] {
		case "cgroup2":
			path, ok = paths[""]
		case "cgroup":
			for _, opt := range strings.Split(g[2], ",") {
				if p, found := paths[opt]; found {
					path, ok = p, true
				}
			}
		default:
			continue
		}
		if !ok {
			continue
		}
		rel, inside := strings.CutPrefix(path, strings.TrimSuffix(root, "/"))
		if !inside {
			continue
		}
		dir := filepath.Join(point, rel, "eksboot-e2e-"+name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("cgroup of the box: %w", err)
		}
		// cpuset v1: a cgroup takes no process until it has CPUs and memory nodes.
		for _, k := range []string{"cpuset.cpus", "cpuset.mems"} {
			if v, err := os.ReadFile(filepath.Join(filepath.Dir(dir), k)); err == nil {
				if err := os.WriteFile(filepath.Join(dir, k), v, 0o644); err != nil {
					return nil, fmt.Errorf("cgroup of the box: %s: %w", k, err)
				}
			}
		}
		dirs = append(dirs, dir)
	}
	return dirs, nil
}

// removeCgroup removes a cgroup and the cgroups under it (empty once the box is
// off), deepest first.
func removeCgroup(dir string) {
	var all []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			all = append(all, p)
		}
		return nil
	})
	for i := len(all) - 1; i >= 0; i-- {
		_ = os.Remove(all[i])
	}
}

// kernelSettings are the kernel settings the kubelet checks (protectKernelDefaults)
// with the values it wants.
var kernelSettings = []struct{ path, value string }{
	{"/proc/sys/vm/overcommit_memory", "1"},
	{"/proc/sys/kernel/panic", "10"},
	{"/proc/sys/kernel/panic_on_oops", "1"},
}

var errNotFound = errors.New("not found")

// readRoot reads a file of the box's root from the host.
func (b *box) readRoot(p string) (string, error) {
	out, err := os.ReadFile(filepath.Join(b.root, p))
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%s: %w", p, errNotFound)
	}
	return string(out), err
}

// lines returns the lines of s that contain sub.
func lines(s, sub string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		if strings.Contains(sc.Text(), sub) {
			out = append(out, sc.Text())
		}
	}
	return out
}
