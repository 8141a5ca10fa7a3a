package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
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

// killed reports whether the traced process died of SIGKILL: strace then exits with
// status 137 or kills itself with the same signal.
func killed(ps *os.ProcessState) bool {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		return true
	}
	return ps.ExitCode() == 137
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

// TestCrashConsistency kills eksboot with SIGKILL at many points while it replaces a
// node's files (the Nth openat, write, fchmod, fsync, rename or unlink, injected by
// strace), then checks that every file it owns is either entirely the old version or
// entirely the new one, that the node as a whole is old or new (mixed only when killed
// among the renames, and no file removed while another is still old), and that a rerun
// completes the node.
func TestCrashConsistency(t *testing.T) {
	strace := testtools.Require(t, "strace")

	// The old node: extra args, another DNS address, pause tag and cluster name, so
	// that every file but the CA changes; the new node loses 30-kubelet-extra-args.conf
	// (an unlink) and gains the logind drop-in (a new file).
	seed := t.TempDir()
	env, args := startCase(t, "01-m5large-usw2-vpc192", seed)
	oldArgs := append(append([]string{"bootstrap", "old-cluster"}, args[2:]...), "--kubelet-extra-args", "--v=3",
		"--dns-cluster-ip", "10.9.0.10", "--pause-container-version", "3.8")
	if code, _, stderr := run(t, env, "", oldArgs...); code != 0 {
		t.Fatalf("old run: exit %d\n%s", code, stderr)
	}
	old := tree(t, seed)
	newArgs := func(root string) []string {
		a := append([]string{}, args...)
		for i := range a {
			if a[i] == "--root" {
				a[i+1] = root
			}
		}
		return append(a, "--graceful-shutdown")
	}
	want := copyTree(t, old)
	if code, _, stderr := run(t, env, "", newArgs(want)...); code != 0 {
		t.Fatalf("new run: exit %d\n%s", code, stderr)
	}
	next := tree(t, want)

	paths := map[string]bool{}
	for k := range old {
		paths[strings.Fields(k)[0]] = true
	}
	for k := range next {
		paths[strings.Fields(k)[0]] = true
	}
	kills, violations, completed := 0, 0, 0
	allOld, allNew, mixed := 0, 0, 0 // node states at the kills
	groups := []string{"openat", "write", "fchmod", "fsync", "rename,renameat,renameat2", "unlink,unlinkat"}
	perGroup := map[string]int{}
	for _, group := range groups {
		for n := 1; n <= 40; n++ {
			root := copyTree(t, old)
			cmdArgs := append([]string{
				"-f", "-qq", "-o", "/dev/null", "-e", "trace=" + group,
				"-e", fmt.Sprintf("inject=%s:signal=SIGKILL:when=%d", group, n), binary,
			}, newArgs(root)...)
			cmd := exec.Command(strace, cmdArgs...)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, err := cmd.CombinedOutput()
			if err == nil {
				completed++
				break // the run finished before its Nth call: no more kill points here
			}
			if !killed(cmd.ProcessState) {
				t.Fatalf("%s #%d: not killed but failed: %v\n%s", group, n, err, out)
			}
			kills++
			perGroup[group]++
			got := targets(tree(t, root))
			asOld, asNew, removed, neither := classify(paths, got, old, next)
			for _, p := range neither {
				violations++
				t.Errorf("killed at %s #%d: %s is neither the old nor the new file", group, n, p)
			}
			// The whole node: all the replaced files old or all new, except when killed
			// among the renames (N renames are not atomic together); a file is removed
			// only after every replacement is done.
			if len(asOld) > 0 && len(asNew) > 0 && !strings.HasPrefix(group, "rename") {
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
			code, _, stderr := run(t, env, "", newArgs(root)...)
			if code != 0 {
				t.Fatalf("rerun after a kill at %s #%d: exit %d\n%s", group, n, code, stderr)
			}
			testtools.CompareTrees(t, tree(t, root), next)
		}
	}
	names := make([]string, 0, len(paths))
	for p := range paths {
		names = append(names, p)
	}
	sort.Strings(names)
	t.Logf("crash consistency: %d kills tried (%v), %d violations, %d uninterrupted runs; the node at the kills: %d all old, %d all new, %d mixed (each among the renames); files checked: %s",
		kills, perGroup, violations, completed, allOld, allNew, mixed, strings.Join(names, ", "))
	for _, g := range groups {
		if perGroup[g] == 0 {
			t.Errorf("no kill at any %s call: the injection is not working", g)
		}
	}
}
