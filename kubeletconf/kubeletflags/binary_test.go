package kubeletflags

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestAgreesWithARealKubelet compares the flags of one minor with what a real kubelet
// binary prints for --help, when EKSBOOT_KUBELET names one and EKSBOOT_KUBELET_MINOR
// its minor (a kubelet built from the module, not a release, reports v0.0.0). Every
// flag in the help must be known, and every known flag the help leaves out must be a
// deprecated one (pflag's MarkDeprecated also hides a flag; the kubelet unhides its
// own, so in 1.24-1.38 none is left out).
//
// Each flag in the help must be IsBool exactly when the kubelet parses it as taking
// no value: "kubelet --help --<flag>" prints the help when the flag may stand alone
// (pflag's NoOptDefVal is set) and fails with "flag needs an argument" when it must
// have a value. The help's own text cannot tell: pflag prints a back-quoted word of a
// boolean flag's usage as its value name (--seccomp-default RuntimeDefault). Both
// runs only parse the flags: the kubelet stops at --help or at the parse error, and
// nothing on the machine changes.
func TestAgreesWithARealKubelet(t *testing.T) {
	bin, minor := realKubelet(t)
	out, err := exec.Command(bin, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --help: %v\n%s", bin, err, out)
	}
	help := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:-[a-zA-Z], )?--([a-z0-9-]+)`).FindAllStringSubmatch(string(out), -1) {
		help[m[1]] = true
	}
	if len(help) < 100 {
		t.Fatalf("%s --help lists %d flags; is it a kubelet?\n%s", bin, len(help), out)
	}
	for f := range help {
		if !Has(minor, f) {
			t.Errorf("kubelet 1.%d's --help lists --%s, which is not known", minor, f)
		}
	}
	var hidden []string
	for _, n := range names {
		if Has(minor, n) && !help[n] {
			if !Deprecated(minor, n) {
				t.Errorf("--%s is known for 1.%d but not in its --help, and not deprecated", n, minor)
			}
			hidden = append(hidden, n)
		}
	}
	booleans := 0
	for f, alone := range standsAlone(t, bin, help) {
		if alone != IsBool(minor, f) {
			t.Errorf("kubelet 1.%d parses --%s alone: %v; IsBool: %v", minor, f, alone, IsBool(minor, f))
		}
		if alone {
			booleans++
		}
	}
	t.Logf("%d flags in --help, %d of them taking no value; %d known deprecated flags not in it: %s", len(help), booleans, len(hidden), strings.Join(hidden, " "))
}

// realKubelet returns the kubelet binary of EKSBOOT_KUBELET and its minor, from
// EKSBOOT_KUBELET_MINOR, or skips.
func realKubelet(t *testing.T) (string, int) {
	bin, minorEnv := os.Getenv("EKSBOOT_KUBELET"), os.Getenv("EKSBOOT_KUBELET_MINOR")
	if bin == "" {
		t.Skip("EKSBOOT_KUBELET is not set (a kubelet binary; EKSBOOT_KUBELET_MINOR its minor, 34 for 1.34)")
	}
	minor, err := strconv.Atoi(minorEnv)
	if err != nil || !Known(minor) {
		t.Fatalf("EKSBOOT_KUBELET_MINOR %q: want a known minor, one of %v", minorEnv, Minors())
	}
	return bin, minor
}

// standsAlone runs "bin --help --<flag>" for every flag and reports, by flag, whether
// the kubelet took it without a value (it printed the help) rather than failing
// because the flag needs one. Four run at a time.
func standsAlone(t *testing.T, bin string, flags map[string]bool) map[string]bool {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	alone := map[string]bool{}
	sem := make(chan struct{}, 4)
	for f := range flags {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out, err := exec.Command(bin, "--help", "--"+f).CombinedOutput()
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && strings.Contains(string(out), "Usage:"):
				alone[f] = true
			case err != nil && strings.Contains(string(out), "flag needs an argument: --"+f):
				alone[f] = false
			default:
				t.Errorf("%s --help --%s: %v, neither the help nor \"flag needs an argument\"\n%s", bin, f, err, out)
			}
		}()
	}
	wg.Wait()
	return alone
}
