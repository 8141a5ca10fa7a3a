package sim

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/internal/testtools"
)

// sealedScripts are the sealing cases of TestEvaluateIsSealed as user data, with
// /tmp as the host directory they aim at.
var sealedScripts = []string{
	"echo pwned > /tmp/sh-interp-x\n/etc/eks/bootstrap.sh c",
	"export TMPDIR=/etc/cron.d\nbash -c 'echo \"* * * * * root id\" > /etc/cron.d/sh-interp-job'\n/etc/eks/bootstrap.sh c",
	"X=$(eval 'cat <(echo hi)')\neval 'y=<(:)'\necho 'Z=$(cat <(echo s))' > s.sh\n. ./s.sh\n/etc/eks/bootstrap.sh \"$X\"",
	"read X < $TMPDIR/sh-interp-secret\nmapfile -t M < /etc/passwd\nY=$(</etc/hostname)\n/etc/eks/bootstrap.sh \"$X\" \"$Y\"",
	"cd /bin; A=$(pwd -P); cd -P /usr\n/etc/eks/bootstrap.sh \"$A\" ~root ~sys ~nobody",
	"[ -O /etc/eks/bootstrap.sh ]; [[ -G /etc/passwd ]]; [ /a -ef /b ]\nsource ~/.bashrc; . profile\n/etc/eks/bootstrap.sh c",
	"for f in /etc/* /tmp/* ~/*; do echo \"$f\"; done\ntype -p curl; command -v jq; hash ls\n/etc/eks/bootstrap.sh c",
}

// TestRenderTouchesNoHostPath evaluates the hostile and sealing scripts in a child
// (this test binary again) under strace, with TMPDIR a watched empty directory and
// the working directory another: afterwards both are unchanged, /tmp has no new
// sh-interp- file, and between the child's markers the only paths it asked the
// kernel about are the user-data files it reads.
func TestRenderTouchesNoHostPath(t *testing.T) {
	if dir := os.Getenv("EKSBOOT_SIM_SEALED"); dir != "" {
		files, _ := filepath.Glob(filepath.Join(dir, "*.userdata"))
		sort.Strings(files)
		_, _ = os.Stat("/eksboot-sealed-test-begin")
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				fmt.Println("read:", err)
				os.Exit(3)
			}
			_, err = Evaluate(context.Background(), script(string(b)), Options{})
			fmt.Printf("%s: %v\n", filepath.Base(f), err)
		}
		_, _ = os.Stat("/eksboot-sealed-test-end")
		os.Exit(0)
	}
	strace := testtools.Require(t, "strace")
	in, tmp, work := t.TempDir(), t.TempDir(), t.TempDir()
	var inputs []string
	for i, src := range append(slices.Clone(sealedScripts), hostileSources()...) {
		p := filepath.Join(in, fmt.Sprintf("%02d.userdata", i))
		must(t, os.WriteFile(p, []byte(src), 0o644))
		inputs = append(inputs, p)
	}
	before := shInterp(t)
	log := filepath.Join(t.TempDir(), "strace.log")
	cmd := exec.Command(strace, "-f", "-qq", "-e", "trace=%file", "-o", log, os.Args[0], "-test.run=^TestRenderTouchesNoHostPath$", "-test.count=1")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "EKSBOOT_SIM_SEALED="+in, "TMPDIR="+tmp, "GOMEMLIMIT=192MiB")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s", out)
	for _, d := range []string{tmp, work} {
		assertEmpty(t, d)
	}
	if after := shInterp(t); !slices.Equal(before, after) {
		t.Errorf("/tmp's sh-interp- files were %q, are %q", before, after)
	}
	b, err := os.ReadFile(log)
	must(t, err)
	lines := strings.Split(string(b), "\n")
	begin := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "/eksboot-sealed-test-begin") })
	end := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "/eksboot-sealed-test-end") })
	if begin < 0 || end < begin {
		t.Fatalf("no markers in the strace log:\n%s", b)
	}
	path := regexp.MustCompile(`"([^"]*)"`)
	n := 0
	for _, l := range lines[begin+1 : end] {
		for _, m := range path.FindAllStringSubmatch(l, -1) {
			n++
			if !slices.Contains(inputs, m[1]) {
				t.Errorf("render asked the kernel for %s: %s", m[1], l)
			}
		}
	}
	if n < len(inputs) {
		t.Errorf("%d paths in the strace log, want at least the %d user-data files", n, len(inputs))
	}
}

func hostileSources() []string {
	var out []string
	for _, h := range hostileScripts {
		out = append(out, h.src)
	}
	return out
}

func shInterp(t *testing.T) []string {
	m, err := filepath.Glob("/tmp/sh-interp-*")
	must(t, err)
	return m
}
