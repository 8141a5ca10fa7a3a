package rootfs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/internal/testtools"
)

// envApplyRoot, set, makes this test binary a helper process: TestMain applies
// durableChanges under the root it names and exits, for TestApplyIsDurable to trace.
const envApplyRoot = "EKSBOOT_ROOTFS_APPLY_ROOT"

func TestMain(m *testing.M) {
	if dir := os.Getenv(envApplyRoot); dir != "" {
		r, err := New(dir)
		if err == nil {
			err = r.Apply(durableChanges())
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// durableChanges are the changes the helper applies on durableTree: a file in
// directories that do not exist yet, a file replaced, a file removed.
func durableChanges() []Change {
	return []Change{
		{Path: "/etc/new/deeper/file.conf", New: []byte("new\n"), Mode: 0o644},
		{Path: "/etc/kept/replaced.conf", Old: []byte("old\n"), New: []byte("replaced\n"), Mode: 0o600},
		{Path: "/etc/kept/removed.conf", Old: []byte("gone\n"), Remove: true},
	}
}

// traced is one system call of an strace -f -y log: its name, the paths among its
// arguments (strings, and the files -y shows for descriptors), its result, and
// the lines it started and ended on.
type traced struct {
	name       string
	paths      []string
	ok         bool
	start, end int
}

var (
	quotedArg = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)
	fdPath    = regexp.MustCompile(`^\s*-?\d+<([^>]*)>`)
)

// parseStrace reads an strace -f -y -qq log into calls, joining the halves of a call
// another thread interrupted.
func parseStrace(log string) []*traced {
	var calls []*traced
	pending := map[string]*traced{}
	parse := func(k *traced, args, ret string) {
		if m := fdPath.FindStringSubmatch(args); m != nil {
			k.paths = append(k.paths, m[1])
		}
		for _, m := range quotedArg.FindAllStringSubmatch(args, -1) {
			k.paths = append(k.paths, m[1])
		}
		k.ok = strings.HasPrefix(strings.TrimSpace(ret), "0")
	}
	split := func(s string) (string, string) {
		i := strings.LastIndex(s, "=")
		if i < 0 {
			return s, ""
		}
		return s[:i], s[i+1:]
	}
	for i, line := range strings.Split(log, "\n") {
		pid, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimLeft(rest, " ")
		if after, ok := strings.CutPrefix(rest, "<... "); ok {
			k := pending[pid]
			_, tail, found := strings.Cut(after, " resumed>")
			if k == nil || !found {
				continue
			}
			delete(pending, pid)
			args, ret := split(tail)
			parse(k, args, ret)
			k.end = i
			continue
		}
		name, args, ok := strings.Cut(rest, "(")
		if !ok || strings.ContainsAny(name, " +") {
			continue
		}
		k := &traced{name: name, start: i, end: i}
		calls = append(calls, k)
		if a, unfinished := strings.CutSuffix(args, " <unfinished ...>"); unfinished {
			if m := fdPath.FindStringSubmatch(a); m != nil {
				k.paths = append(k.paths, m[1])
			}
			pending[pid] = k
			continue
		}
		a, ret := split(args)
		parse(k, a, ret)
	}
	return calls
}

// fsyncedBetween reports whether calls hold a completed fsync of p that starts after
// line from and ends before line to.
func fsyncedBetween(calls []*traced, p string, from, to int) bool {
	for _, s := range calls {
		if (s.name == "fsync" || s.name == "fdatasync") && s.ok && len(s.paths) > 0 && s.paths[0] == p && s.start > from && s.end < to {
			return true
		}
	}
	return false
}

// TestApplyIsDurable traces Apply (strace -f -y of this test binary as a helper
// process) and checks the order a power loss needs: each file is synced before it
// is renamed over its target, each rename and each removal is followed by a sync
// of its directory, and each directory made by a sync of its parent. Only
// cmd/eksboot's trace of the whole binary held this before; a missing directory
// sync inside Apply failed no test of this package.
func TestApplyIsDurable(t *testing.T) {
	strace := testtools.Require(t, "strace")
	dir := t.TempDir()
	root, err := filepath.EvalSymlinks(dir)
	must(t, err)
	must(t, os.MkdirAll(filepath.Join(root, "etc/kept"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "etc/kept/replaced.conf"), []byte("old\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(root, "etc/kept/removed.conf"), []byte("gone\n"), 0o644))
	log := filepath.Join(t.TempDir(), "strace.log")
	cmd := exec.Command(strace, "-f", "-y", "-qq", "-s", "4096", "-o", log,
		"-e", "trace=fsync,fdatasync,rename,renameat,renameat2,mkdir,mkdirat,unlink,unlinkat", os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envApplyRoot+"="+root)
	if out, err := cmd.CombinedOutput(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("strace: %v\n%s", err, out)
		}
		t.Fatalf("the helper: %v\n%s", err, out)
	}
	b, err := os.ReadFile(log)
	must(t, err)
	calls := parseStrace(string(b))
	sameTree(t, root, map[string]string{"etc/new/deeper/file.conf": "new\n", "etc/kept/replaced.conf": "replaced\n"})

	under := func(p string) bool { return strings.HasPrefix(p, root+"/") }
	renames, mkdirs, unlinks := 0, 0, 0
	for _, k := range calls {
		switch {
		case !k.ok:
		case strings.HasPrefix(k.name, "rename"):
			p := k.paths[len(k.paths)-2:] // renameat's descriptors come first
			if !under(p[1]) {
				continue
			}
			renames++
			if !fsyncedBetween(calls, p[0], -1, k.start) {
				t.Errorf("%s is renamed over %s with no fsync of it before: a power loss can leave the file empty", p[0], p[1])
			}
			if !fsyncedBetween(calls, filepath.Dir(p[1]), k.end, len(b)) {
				t.Errorf("the rename over %s is not followed by an fsync of %s: a power loss can undo it", p[1], filepath.Dir(p[1]))
			}
		case strings.HasPrefix(k.name, "mkdir"):
			d := k.paths[len(k.paths)-1]
			if !under(d) {
				continue
			}
			mkdirs++
			if !fsyncedBetween(calls, filepath.Dir(d), k.end, len(b)) {
				t.Errorf("the new directory %s is not followed by an fsync of %s: a power loss can lose it and what is renamed into it", d, filepath.Dir(d))
			}
		case strings.HasPrefix(k.name, "unlink"):
			f := k.paths[len(k.paths)-1]
			if !under(f) || strings.Contains(filepath.Base(f), ".eksboot-") {
				continue
			}
			unlinks++
			if !fsyncedBetween(calls, filepath.Dir(f), k.end, len(b)) {
				t.Errorf("the removal of %s is not followed by an fsync of %s: a power loss can bring the file back", f, filepath.Dir(f))
			}
		}
	}
	if renames != 2 || mkdirs != 2 || unlinks != 1 {
		t.Errorf("the trace holds %d renames, %d directories made, %d removals under the root; want 2, 2 and 1 (is it strace's format?)\n%s", renames, mkdirs, unlinks, b)
	}
}
