package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/eksboot/eksboot/imds/imdstest"
)

// maxBombRSS is the peak resident memory a run refusing an alias bomb may reach.
const maxBombRSS = 256 << 20

// aliasBombs are NodeConfigs of under 64 KiB whose aliases or merge keys expand
// them to gigabytes, each with the bound its refusal names. The first is issue
// 38's: a 35 KB string anchored once, a list of ten aliases to it, that list
// aliased 7,000 times (2.4 GB of JSON; before the bound, `fatal error: out of
// memory`).
func aliasBombs(t *testing.T) []struct{ name, doc, want string } {
	t.Helper()
	sample, err := os.ReadFile("../../testdata/userdata/10-nodeadm-plain-nodeconfig.userdata")
	if err != nil {
		t.Fatal(err)
	}
	head, spec, ok := strings.Cut(string(sample), "spec:\n")
	if !ok {
		t.Fatal("the sample has no spec")
	}
	nc := func(metadata string) string { return head + "metadata:\n" + metadata + "spec:\n" + spec }
	aliases := func(name string, n int) string { return strings.TrimSuffix(strings.Repeat("*"+name+",", n), ",") }
	long := strings.Repeat("x", 35_000)
	ones := strings.TrimSuffix(strings.Repeat("1,", 2000), ",")
	var laughs strings.Builder
	laughs.WriteString("  l0: &l0 [a,b,c,d,e,f,g,h,i,j]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&laughs, "  l%d: &l%d [%s]\n", i, i, aliases(fmt.Sprintf("l%d", i-1), 10))
	}
	var merges strings.Builder
	merges.WriteString("  s: &s " + long + "\n  m: &m {k0: *s,k1: *s,k2: *s,k3: *s,k4: *s,k5: *s,k6: *s,k7: *s,k8: *s,k9: *s}\n  list: [")
	merges.WriteString(strings.TrimSuffix(strings.Repeat("{<<: *m},", 2500), ","))
	merges.WriteString("]\n")
	const bytesBound, valuesBound = "more than 4194304 bytes of JSON with its aliases and merge keys expanded (the bound", "more than 100000 values with its aliases and merge keys expanded (the bound)"
	return []struct{ name, doc, want string }{
		{"a 35 KB string aliased 70,000 times", nc("  a: &a " + long + "\n  b: &b [" + aliases("a", 10) + "]\n  c: [" + aliases("b", 7000) + "]\n"), bytesBound},
		{"2,000 numbers aliased 10,000 times", nc("  a: &a [" + ones + "]\n  b: [" + aliases("a", 10_000) + "]\n"), valuesBound},
		{"a billion laughs", nc(laughs.String()), "more than 99% of its values come from aliases (the bound"},
		{"2,500 merges of ten aliases of a 35 KB string", nc(merges.String()), bytesBound},
		{"a 35 KB string as 2,000 map keys", nc("  s: &s " + long + "\n  m: {" + strings.TrimSuffix(strings.Repeat("*s : 1,", 2000), ",") + "}\n"), bytesBound},
	}
}

// runMeasured runs cmd and returns its exit status, what it printed on stderr
// when that is one line (else the whole of it) and its peak resident memory
// (getrusage's ru_maxrss of the child).
func runMeasured(t *testing.T, cmd *exec.Cmd) (int, string, int64) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("run %s: %v", cmd.Path, err)
	}
	return code, strings.TrimSuffix(stderr.String(), "\n"), cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
}

// TestAliasBombsEndInOneLine: each alias bomb, as the user data of `eksboot init`
// (the fake IMDS serving it), as a drop-in of /etc/eks/eksboot.d, and as the user
// data of `eksboot render` (which execs eksboot-render), ends in one line (all of
// stderr) naming
// the part and the bound, exit 1, nothing written, and a peak RSS under 256 MiB;
// and so do a #cloud-config part of the same shape through render, whose
// simulator decodes cloud-config with yaml/v3, and the densest NodeConfig user
// data can hold (1 MiB decoded, 524,000 numbers: its parse alone is most of the
// memory).
func TestAliasBombsEndInOneLine(t *testing.T) {
	check := func(t *testing.T, how string, cmd *exec.Cmd, root, where, want string) {
		t.Helper()
		code, last, rss := runMeasured(t, cmd)
		if code != 1 || strings.Contains(last, "\n") || !strings.Contains(last, where+": ") || !strings.Contains(last, want) {
			t.Errorf("%s: exit %d, stderr %.400q; want exit 1 and one line naming %q and %q", how, code, last, where, want)
		}
		if rss > maxBombRSS {
			t.Errorf("%s: peak RSS %d MiB, want under %d MiB", how, rss>>20, maxBombRSS>>20)
		}
		if root != "" {
			if files := tree(t, root); len(files) != 0 {
				t.Errorf("%s: %d files written, want none", how, len(files))
			}
		}
		t.Logf("%s: exit %d, peak RSS %.1f MiB: %.200s", how, code, float64(rss)/(1<<20), last)
	}
	for _, tc := range aliasBombs(t) {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.doc) > 64<<10 {
				t.Fatalf("the bomb is %d bytes, more than user data may be", len(tc.doc))
			}
			t.Logf("%d bytes of NodeConfig", len(tc.doc))
			inst := imdstest.DefaultInstance()
			inst.UserData = tc.doc
			srv, err := imdstest.NewServer(inst)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = srv.Close() })
			initArgs := func(root string) []string {
				return []string{"init", "--root", root, "--no-restart", "--kubelet-version", "1.32.9", "--imds-endpoint", srv.URL()}
			}
			root := t.TempDir()
			check(t, "init", exec.Command(binary, initArgs(root)...), root, "part 1 (application/node.eks.aws)", tc.want)

			// The same bomb as a drop-in, with no user data.
			srv.SetOverride("latest/user-data", nil)
			root = t.TempDir()
			dropIns := filepath.Join(root, "etc/eks/eksboot.d")
			if err := os.MkdirAll(dropIns, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dropIns, "50-bomb.yaml"), []byte(tc.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(binary, initArgs(root)...)
			code, last, rss := runMeasured(t, cmd)
			if code != 1 || strings.Contains(last, "\n") || !strings.Contains(last, "/etc/eks/eksboot.d/50-bomb.yaml: ") || !strings.Contains(last, tc.want) || rss > maxBombRSS {
				t.Errorf("init, a drop-in: exit %d, peak RSS %d MiB, stderr %.400q", code, rss>>20, last)
			}
			t.Logf("init, a drop-in: exit %d, peak RSS %.1f MiB", code, float64(rss)/(1<<20))

			file := filepath.Join(t.TempDir(), "user-data")
			if err := os.WriteFile(file, []byte(tc.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			check(t, "render", exec.Command(binary, "render", "--user-data", file, "--instance-type", "m5.large"), "", "part 1 (application/node.eks.aws)", tc.want)
		})
	}
	t.Run("1 MiB of numbers, no alias, gzipped", func(t *testing.T) {
		sample, err := os.ReadFile("../../testdata/userdata/10-nodeadm-plain-nodeconfig.userdata")
		if err != nil {
			t.Fatal(err)
		}
		head, spec, _ := strings.Cut(string(sample), "spec:\n")
		doc := head + "metadata:\n  a: [" + strings.Repeat("1,", (1<<20-len(sample)-40)/2) + "1]\nspec:\n" + spec
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		_, _ = zw.Write([]byte(doc))
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		inst := imdstest.DefaultInstance()
		inst.UserData = gz.String()
		srv, err := imdstest.NewServer(inst)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		root := t.TempDir()
		check(t, "init", exec.Command(binary, "init", "--root", root, "--no-restart", "--kubelet-version", "1.32.9", "--imds-endpoint", srv.URL()),
			root, "part 1 (application/node.eks.aws)", "more than 100000 values")
		file := filepath.Join(t.TempDir(), "user-data")
		if err := os.WriteFile(file, gz.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		check(t, "render", exec.Command(binary, "render", "--user-data", file, "--instance-type", "m5.large"), "", "part 1 (application/node.eks.aws)", "more than 100000 values")
	})
	t.Run("cloud-config", func(t *testing.T) {
		long := strings.Repeat("x", 35_000)
		doc := "#cloud-config\nx-anchor: &a " + long + "\nx-list: &b [" + strings.TrimSuffix(strings.Repeat("*a,", 10), ",") + "]\nruncmd: [" +
			strings.TrimSuffix(strings.Repeat("*b,", 7000), ",") + "]\n"
		file := filepath.Join(t.TempDir(), "user-data")
		if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		check(t, "render", exec.Command(binary, "render", "--user-data", file, "--instance-type", "m5.large"), "", "part 1 (text/cloud-config)", "more than 4194304 bytes of JSON")
	})
}
