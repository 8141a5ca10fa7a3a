package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/eksboot/eksboot/internal/testtools"
)

// copyTree copies the regular files of src into a new temporary directory.
func copyTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, files)
	return dir
}

// targets drops eksboot's temporary files (".name.eksboot-*") from a tree snapshot:
// a kill may leave one behind; the node never reads it and the next write removes it.
func targets(tree map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range tree {
		if !strings.Contains(filepath.Base(strings.Fields(k)[0]), ".eksboot-") {
			out[k] = v
		}
	}
	return out
}

// version returns the entry of tree tr for node path p (its key, which carries the
// mode, and content), and whether there is one.
func version(tr map[string]string, p string) (string, bool) {
	for k, v := range tr {
		if strings.Fields(k)[0] == p {
			return k + "\x00" + v, true
		}
	}
	return "", false
}

// classify sorts the paths of a node killed mid-run (got) against the node before
// (old) and after (next) the run: the replaced files still old, those already new,
// the removals done, and the files that are neither old nor new.
func classify(paths map[string]bool, got, old, next map[string]string) (asOld, asNew, removed, neither []string) {
	for p := range paths {
		g, gok := version(got, p)
		o, ook := version(old, p)
		w, wok := version(next, p)
		if (gok && (!ook || g != o) && (!wok || g != w)) || (!gok && ook && wok) {
			neither = append(neither, p)
			continue
		}
		switch {
		case wok && (!ook || o != w) && gok && g == w:
			asNew = append(asNew, p)
		case wok && (!ook || o != w):
			asOld = append(asOld, p)
		case ook && !wok && !gok:
			removed = append(removed, p)
		}
	}
	return asOld, asNew, removed, neither
}

// TestCrashConsistency kills eksboot with SIGKILL at every one of its file system
// calls on the node's files while it replaces them (each openat, write, fchmod, fchown,
// fsync, rename and unlink under the root, counted across all its threads by killAt),
// then checks that every file it owns is either entirely the old version or entirely
// the new one, that the node as a whole is old or new (mixed only when killed among the
// renames, and no file removed while another is still old), and that a rerun completes
// the node. The kill points tried must be exactly the calls strace -f sees in a clean
// run: none is left out.
func TestCrashConsistency(t *testing.T) {
	strace := testtools.Require(t, "strace")
	c := newCrashCase(t)

	// The kill points, as strace -f counts them in a clean run (every thread's calls).
	clean := copyTree(t, c.old)
	calls, code := straceCalls(t, strace, c, clean, killGroupNames())
	if code != 0 {
		t.Fatalf("the clean run under strace: exit %d", code)
	}
	want := map[string]int{}
	for _, k := range calls {
		if k.under(clean) {
			want[k.group]++
		}
	}

	kills, violations, completed := 0, 0, 0
	allOld, allNew, mixed := 0, 0, 0 // node states at the kills
	perGroup := map[string]int{}
	for _, group := range killGroups {
		for n := 1; ; n++ {
			root := copyTree(t, c.old)
			r, err := killAt(c.command(root), group, root, n)
			if err != nil {
				t.Fatalf("%s #%d: %v\n%s", group, n, err, r.output)
			}
			if !r.killed {
				if !r.status.Exited() || r.status.ExitStatus() != 0 {
					t.Fatalf("%s #%d: not killed but failed: %v\n%s", group, n, r.status, r.output)
				}
				completed++
				if r.seen != n-1 || r.seen != want[group.name] {
					t.Errorf("%s: %d kill points tried, the clean run made %d such calls (strace -f counts %d)", group, n-1, r.seen, want[group.name])
				}
				break // the run finished before its n-th call: no more kill points here
			}
			if !r.status.Signaled() || r.status.Signal() != syscall.SIGKILL {
				t.Fatalf("%s #%d: killed, but the binary ended with %v\n%s", group, n, r.status, r.output)
			}
			kills++
			perGroup[group.name]++
			got := targets(tree(t, root))
			asOld, asNew, removed, neither := classify(c.paths, got, c.old, c.next)
			for _, p := range neither {
				violations++
				t.Errorf("killed at %s #%d: %s is neither the old nor the new file", group, n, p)
			}
			// The whole node: all the replaced files old or all new, except when killed
			// among the renames (N renames are not atomic together); a file is removed
			// only after every replacement is done.
			if len(asOld) > 0 && len(asNew) > 0 && !strings.Contains(group.name, "rename") {
				violations++
				t.Errorf("killed at %s #%d, outside the renames: a mixed node, new %v, old %v", group, n, asNew, asOld)
			}
			if len(removed) > 0 && len(asOld) > 0 {
				violations++
				t.Errorf("killed at %s #%d: %v removed while %v are still old", group, n, removed, asOld)
			}
			switch {
			case len(asNew) == 0 && len(removed) == 0:
				allOld++
			case len(asOld) == 0:
				allNew++
			default:
				mixed++
			}
			code, _, stderr := run(t, c.env, "", c.newArgs(root)...)
			if code != 0 {
				t.Fatalf("rerun after a kill at %s #%d: exit %d\n%s", group, n, code, stderr)
			}
			testtools.CompareTrees(t, tree(t, root), c.next)
		}
	}
	names := make([]string, 0, len(c.paths))
	for p := range c.paths {
		names = append(names, p)
	}
	sort.Strings(names)
	t.Logf("crash consistency: %d kills tried (%v; strace -f counts %v), %d violations, %d uninterrupted runs; the node at the kills: %d all old, %d all new, %d mixed (each among the renames); files checked: %s",
		kills, perGroup, want, violations, completed, allOld, allNew, mixed, strings.Join(names, ", "))
	for _, g := range killGroups {
		if perGroup[g.name] == 0 && (g.name != "fchown" || os.Geteuid() == 0) {
			t.Errorf("no kill at any %s call: the injection is not working", g)
		}
	}
}

// crashCase is the node the crash tests replace: its files before (old) and after
// (next) the run, and how to run it.
type crashCase struct {
	env       map[string]string
	args      []string
	old, next map[string]string
	paths     map[string]bool // every node path of old and next
}

// newCrashCase makes the old node: extra args, another DNS address, pause tag and
// cluster name, so that every file but the CA changes; the new node loses
// 30-kubelet-extra-args.conf (an unlink) and gains the logind drop-in (a new file in a
// new directory).
func newCrashCase(t *testing.T) *crashCase {
	t.Helper()
	seed := t.TempDir()
	env, args := startCase(t, "01-m5large-usw2-vpc192", seed)
	c := &crashCase{env: env, args: args, paths: map[string]bool{}}
	oldArgs := append(append([]string{"bootstrap", "old-cluster"}, args[2:]...), "--kubelet-extra-args", "--v=3",
		"--dns-cluster-ip", "10.9.0.10", "--pause-container-version", "3.8")
	if code, _, stderr := run(t, env, "", oldArgs...); code != 0 {
		t.Fatalf("old run: exit %d\n%s", code, stderr)
	}
	c.old = tree(t, seed)
	want := copyTree(t, c.old)
	if code, _, stderr := run(t, env, "", c.newArgs(want)...); code != 0 {
		t.Fatalf("new run: exit %d\n%s", code, stderr)
	}
	c.next = tree(t, want)
	for k := range c.old {
		c.paths[strings.Fields(k)[0]] = true
	}
	for k := range c.next {
		c.paths[strings.Fields(k)[0]] = true
	}
	return c
}

// newArgs are the arguments of the run that makes the new node under root.
func (c *crashCase) newArgs(root string) []string {
	a := append([]string{}, c.args...)
	for i := range a {
		if a[i] == "--root" {
			a[i+1] = root
		}
	}
	return append(a, "--graceful-shutdown")
}

// command is the run that makes the new node under root, not started.
func (c *crashCase) command(root string, prefix ...string) *exec.Cmd {
	argv := append(append(prefix, binary), c.newArgs(root)...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	for k, v := range c.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

func killGroupNames() []string {
	var names []string
	for _, g := range killGroups {
		names = append(names, g.name)
	}
	return names
}

// tracedCall is one syscall of an strace -f -y log: its name, its group (the -e
// trace= set it belongs to), its arguments and return value as strace printed them
// (descriptors as fd</path>), and the lines where it began and ended (apart when
// another thread's call came between).
type tracedCall struct {
	name, group, args, ret string
	start, end             int
}

// file is the file the call names: the path of its first descriptor, else its first
// quoted path.
func (k tracedCall) file() string {
	if m := fdArg().FindStringSubmatch(k.args); m != nil {
		return m[1]
	}
	if m := quoted().FindStringSubmatch(k.args); m != nil {
		return m[1]
	}
	return ""
}

// paths are the quoted paths of the call's arguments.
func (k tracedCall) paths() []string {
	var out []string
	for _, m := range quoted().FindAllStringSubmatch(k.args, -1) {
		out = append(out, m[1])
	}
	return out
}

func (k tracedCall) ok() bool { return strings.HasPrefix(k.ret, "0") }

func (k tracedCall) under(root string) bool {
	f := k.file()
	return f == root || strings.HasPrefix(f, root+"/")
}

var (
	fdArg  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d+<([^>]*)>`) })
	quoted = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`) })
)

// straceCalls runs the new node's run under root through strace -f -y (every thread,
// descriptors shown as their paths) tracing the groups, and returns its calls in the
// order they began, and the exit status.
func straceCalls(t *testing.T, strace string, c *crashCase, root string, groups []string) ([]tracedCall, int) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "strace.log")
	cmd := c.command(root, strace, "-f", "-y", "-qq", "-s", "4096", "-o", log, "-e", "trace="+strings.Join(groups, ","))
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("strace: %v\n%s", err, out)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	group := map[string]string{}
	for _, g := range groups {
		for _, name := range strings.Split(g, ",") {
			group[name] = g
		}
	}
	var calls []*tracedCall
	pending := map[string]*tracedCall{} // thread -> its unfinished call
	for i, line := range strings.Split(string(b), "\n") {
		pid, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimLeft(rest, " ")
		switch {
		case strings.HasPrefix(rest, "<... "):
			k := pending[pid]
			_, after, ok := strings.Cut(rest, " resumed>")
			if k == nil || !ok {
				continue
			}
			delete(pending, pid)
			args, ret := splitRet(after)
			k.args += args
			k.ret, k.end = ret, i
		case strings.Contains(rest, "("):
			name, after, _ := strings.Cut(rest, "(")
			if group[name] == "" {
				continue
			}
			k := &tracedCall{name: name, group: group[name], start: i, end: i}
			if a, ok := strings.CutSuffix(after, " <unfinished ...>"); ok {
				k.args = a
				pending[pid] = k
			} else {
				k.args, k.ret = splitRet(after)
			}
			calls = append(calls, k)
		}
	}
	list := make([]tracedCall, len(calls))
	for i, k := range calls {
		list[i] = *k
	}
	return list, cmd.ProcessState.ExitCode()
}

// splitRet splits "args) = ret" (strace pads before the "=") at its last "=".
func splitRet(s string) (string, string) {
	i := strings.LastIndex(s, " = ")
	if i < 0 {
		return s, ""
	}
	return strings.TrimSuffix(strings.TrimRight(s[:i], " "), ")"), s[i+len(" = "):]
}

// TestEveryRenameIsDurable reads an strace -f of a run that replaces a node's files:
// every rename of a temporary file follows an fsync of that file (else a power loss
// after the rename can leave the new name with no data: a SIGKILL, which the crash
// test sends, cannot show that, the page cache survives it), every directory is
// fsynced after the last rename into it (else the rename itself can be lost), and
// the parent of every directory the run creates is fsynced after it.
func TestEveryRenameIsDurable(t *testing.T) {
	strace := testtools.Require(t, "strace")
	c := newCrashCase(t)
	root := copyTree(t, c.old)
	calls, code := straceCalls(t, strace, c, root, []string{"fsync,fdatasync", "rename,renameat,renameat2", "mkdir,mkdirat"})
	if code != 0 {
		t.Fatalf("the run under strace: exit %d", code)
	}
	if mkdirs := checkDirsMadeDurable(t, calls, root); mkdirs == 0 {
		t.Error("the run made no directory: the new node's logind.conf.d should be one")
	}
	renames := checkRenamesDurable(t, calls, root)
	changed := 0
	for k, v := range c.next {
		if o, ok := c.old[k]; !ok || o != v {
			changed++
		}
	}
	if renames != changed {
		t.Errorf("%d renames of temporary files in the trace, want one for each of the %d files the run changes", renames, changed)
	}
	if !t.Failed() {
		t.Logf("%d renames, each after an fsync of its file and before an fsync of its directory", renames)
	}
}

// syncedAfter reports whether calls fsync dir after the call k ends.
func syncedAfter(calls []tracedCall, dir string, k tracedCall) bool {
	for _, s := range calls {
		if s.group == "fsync,fdatasync" && s.ok() && s.file() == dir && s.start > k.end {
			return true
		}
	}
	return false
}

// checkDirsMadeDurable checks that each directory made under root is followed by an
// fsync of its parent, and returns how many were made.
func checkDirsMadeDurable(t *testing.T, calls []tracedCall, root string) int {
	t.Helper()
	mkdirs := 0
	for _, k := range calls {
		if k.group != "mkdir,mkdirat" || !k.ok() || !k.under(root) {
			continue
		}
		mkdirs++
		if d := k.file(); !syncedAfter(calls, filepath.Dir(d), k) {
			t.Errorf("the new directory %s is not followed by an fsync of %s: a power loss can lose it, and the files renamed into it", d, filepath.Dir(d))
		}
	}
	return mkdirs
}

// checkRenamesDurable checks that each rename of a temporary file under root
// follows a completed fsync of that file and is followed by an fsync of its
// directory, and returns how many renames there were.
func checkRenamesDurable(t *testing.T, calls []tracedCall, root string) int {
	t.Helper()
	renames := 0
	for _, k := range calls {
		p := k.paths()
		if k.group != "rename,renameat,renameat2" || !k.ok() || len(p) != 2 ||
			!strings.HasPrefix(p[0], root+"/") || !strings.Contains(filepath.Base(p[0]), ".eksboot-") {
			continue
		}
		renames++
		synced := false
		for _, s := range calls {
			if s.group == "fsync,fdatasync" && s.ok() && s.file() == p[0] && s.end < k.start {
				synced = true
			}
		}
		if !synced {
			t.Errorf("%s is renamed over %s with no fsync of it before: a power loss can leave the file empty", p[0], p[1])
		}
		if !syncedAfter(calls, filepath.Dir(p[1]), k) {
			t.Errorf("the rename over %s is not followed by an fsync of %s: a power loss can undo it", p[1], filepath.Dir(p[1]))
		}
	}
	return renames
}
