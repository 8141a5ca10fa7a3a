package kubeletflags

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestAgreesWithARealKubelet compares the flags of one minor with what a real kubelet
// binary prints for --help, when EKSBOOT_KUBELET names one and EKSBOOT_KUBELET_MINOR
// its minor (a kubelet built from the module, not a release, reports v0.0.0). Every
// flag in the help must be known, and every known flag the help leaves out must be a
// deprecated one (pflag's MarkDeprecated also hides a flag; the kubelet unhides its
// own, so in 1.24-1.38 none is left out). Running --help only parses the flags:
// nothing on the machine changes.
func TestAgreesWithARealKubelet(t *testing.T) {
	bin, minorEnv := os.Getenv("EKSBOOT_KUBELET"), os.Getenv("EKSBOOT_KUBELET_MINOR")
	if bin == "" {
		t.Skip("EKSBOOT_KUBELET is not set (a kubelet binary; EKSBOOT_KUBELET_MINOR its minor, 34 for 1.34)")
	}
	minor, err := strconv.Atoi(minorEnv)
	if err != nil || !Known(minor) {
		t.Fatalf("EKSBOOT_KUBELET_MINOR %q: want a known minor, one of %v", minorEnv, Minors())
	}
	out, err := exec.Command(bin, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --help: %v\n%s", bin, err, out)
	}
	help := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:-[a-z], )?--([a-z0-9-]+)`).FindAllStringSubmatch(string(out), -1) {
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
	t.Logf("%d flags in --help; %d known deprecated flags not in it: %s", len(help), len(hidden), strings.Join(hidden, " "))
}
