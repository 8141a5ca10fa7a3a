package kubeletgates

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// stopLabel is a node label that every kubelet 1.24-1.38 refuses in
// options.ValidateKubeletFlags, the step right after it applies the --feature-gates
// of its command line (cmd/kubelet/app/server.go, NewKubeletCommand's RunE: parse the
// flags, --help, --version, DefaultMutableFeatureGate.SetFromMap, then
// ValidateKubeletFlags). A kubelet given it stops there, before it reads a
// configuration file or touches the machine: so its message says the gates passed.
const (
	stopLabel = "--node-labels=gates-stop.kubernetes.io/here=1"
	stopped   = "failed to validate kubelet flags: unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [gates-stop.kubernetes.io/here]"
	gatesFail = "failed to set feature gates from initial flags-based config"
)

// TestGatesAgreeWithARealKubelet holds one minor's gates to a real kubelet binary, when
// EKSBOOT_KUBELET names one and EKSBOOT_KUBELET_MINOR its minor:
//
//   - the --feature-gates section of its --help (the alpha and beta gates, and
//     AllAlpha and AllBeta, each "Name=true|false (STAGE - default=x)") must list
//     exactly the table's alpha and beta gates, with their stages and defaults;
//   - every gate of the table, set to its default, must be taken; every locked gate
//     set against its lock must be refused, each with "cannot set feature gate X to
//     v, feature is locked to d"; and every gate that is not locked, set against its
//     default, must not be refused as locked;
//   - every gate of another minor that the table says this one lacks must give
//     "unrecognized feature gate: X".
//
// The kubelet is run with the gates in --feature-gates and with stopLabel, so it stops
// at the gates or right after them; it is given a --root-dir and a --cert-dir under the
// test's temporary folder, which must not exist afterwards. A run reads its own
// binary, /proc, /sys and /etc/localtime, writes only to its stderr and opens no
// socket (strace -f of a run, in the commit that added this test).
func TestGatesAgreeWithARealKubelet(t *testing.T) {
	bin, minorEnv := os.Getenv("EKSBOOT_KUBELET"), os.Getenv("EKSBOOT_KUBELET_MINOR")
	if bin == "" {
		t.Skip("EKSBOOT_KUBELET is not set (a kubelet binary; EKSBOOT_KUBELET_MINOR its minor, 34 for 1.34)")
	}
	minor, err := strconv.Atoi(minorEnv)
	if err != nil || !Known(minor) {
		t.Fatalf("EKSBOOT_KUBELET_MINOR %q: want a known minor, one of %v", minorEnv, Minors())
	}
	k := &kubelet{t: t, bin: bin, dir: t.TempDir()}
	gates := Gates(minor)
	listed := agreeWithHelp(t, k, minor, gates)
	locked, unlocked := agreeWhenSet(t, k, minor, gates)
	absent, unavailable := refusedWhenAbsent(t, k, minor)
	for _, d := range []string{"root", "pki"} {
		if _, err := os.Stat(filepath.Join(k.dir, d)); !os.IsNotExist(err) {
			t.Errorf("the kubelet made its --root-dir or --cert-dir %s: %v", d, err)
		}
	}
	t.Logf("1.%d: %d gates; %d alpha and beta in --help; %d taken at their defaults; %d locked refused against their lock; %d unlocked not refused against their defaults; %d of other minors unrecognized; %d unavailable refused",
		minor, len(gates), listed, len(gates), locked, unlocked, absent, unavailable)
}

// agreeWithHelp compares the alpha and beta gates with the kubelet's --help and
// returns how many there are.
func agreeWithHelp(t *testing.T, k *kubelet, minor int, gates []Gate) int {
	t.Helper()
	out, err := exec.Command(k.bin, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --help: %v\n%s", k.bin, err, out)
	}
	help := helpGates(t, string(out))
	listed := 0
	for _, g := range gates {
		if g.Stage != Alpha && g.Stage != Beta {
			continue
		}
		listed++
		h, ok := help[g.Name]
		switch {
		case !ok:
			t.Errorf("1.%d: %s (%s, default %v) is not in the kubelet's --help", minor, g.Name, g.Stage, g.Default)
		case h != g:
			t.Errorf("1.%d: the kubelet's --help has %+v, the table %+v", minor, h, g)
		}
	}
	for name, h := range help {
		if g, ok := Lookup(minor, name); !ok || g.Stage != Alpha && g.Stage != Beta {
			t.Errorf("1.%d: the kubelet's --help lists %+v; the table: %+v, %v", minor, h, g, ok)
		}
	}
	return listed
}

// agreeWhenSet sets every gate to its default, the locked ones against their lock,
// and the others against their default, and returns how many are locked and not.
func agreeWhenSet(t *testing.T, k *kubelet, minor int, gates []Gate) (int, int) {
	t.Helper()
	all, locked, unlocked := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, g := range gates {
		all[g.Name] = g.Default
		if g.Locked {
			locked[g.Name] = !g.Default
		} else {
			unlocked[g.Name] = !g.Default
		}
	}
	if out := k.run(all); !strings.Contains(out, stopped) {
		t.Errorf("1.%d: the kubelet refused its %d gates at their defaults:\n%s", minor, len(all), out)
	}
	if len(locked) > 0 {
		out := k.run(locked)
		if !strings.Contains(out, gatesFail) {
			t.Errorf("1.%d: the kubelet took %d locked gates set against their lock:\n%s", minor, len(locked), out)
		}
		for name, v := range locked {
			if want := fmt.Sprintf("cannot set feature gate %s to %v, feature is locked to %v", name, v, !v); !strings.Contains(out, want) {
				t.Errorf("1.%d: no %q", minor, want)
			}
		}
		if n := strings.Count(out, "cannot set feature gate"); n != len(locked) {
			t.Errorf("1.%d: %d gates refused, %d locked ones set against their lock:\n%s", minor, n, len(locked), out)
		}
	}
	// The lock of each gate is checked before the dependencies between them (1.37 on):
	// when none is refused as locked, the kubelet either stops at stopLabel or names
	// gates enabled without the ones they depend on.
	out := k.run(unlocked)
	if strings.Contains(out, "feature is locked") || strings.Contains(out, "unrecognized feature gate") ||
		!strings.Contains(out, stopped) && !strings.Contains(out, "depends on features that are disabled") {
		t.Errorf("1.%d: the kubelet refused gates that are not locked, set against their defaults:\n%s", minor, out)
	}
	return len(locked), len(unlocked)
}

// refusedWhenAbsent sets, one at a time, every gate of another minor that this one
// lacks, and any this one has but refuses to set (pre-alpha: none in 1.24-1.38), and
// returns how many of each.
func refusedWhenAbsent(t *testing.T, k *kubelet, minor int) (int, int) {
	t.Helper()
	var absent, unavailable []string
	m := row(minor)
	for i, n := range names {
		switch {
		case m.unavailable.get(i):
			unavailable = append(unavailable, n)
		case !m.has.get(i):
			absent = append(absent, n)
		}
	}
	k.each(absent, func(name, out string) {
		if !strings.Contains(out, gatesFail+": unrecognized feature gate: "+name+"\"") {
			t.Errorf("1.%d: %s is not in the table, but the kubelet did not say it is unrecognized:\n%s", minor, name, out)
		}
	})
	k.each(unavailable, func(name, out string) {
		if !strings.Contains(out, "cannot set feature gate "+name+" to true, feature is PreAlpha at emulated version") {
			t.Errorf("1.%d: %s is not available at 1.%d, but the kubelet did not say so:\n%s", minor, name, minor, out)
		}
	})
	return len(absent), len(unavailable)
}

// helpGates returns the gates the --feature-gates section of a kubelet's --help
// lists. A gate whose spec differs when the minimum compatibility version is the
// kubelet's own (1.37 on) has a second form after ", or ": the first is the one in
// effect.
func helpGates(t *testing.T, help string) map[string]Gate {
	t.Helper()
	_, section, ok := strings.Cut(help, "--feature-gates mapStringBool")
	if !ok {
		t.Fatalf("no --feature-gates in the kubelet's --help:\n%s", help)
	}
	if i := regexp.MustCompile(`\n\s+(?:-[a-zA-Z], )?--[a-z]`).FindStringIndex(section); i != nil {
		section = section[:i[0]]
	}
	lines := strings.Split(section, "\n")[1:] // the first is the flag's usage
	// The last line carries the flag's deprecation (the kubelet wants --config).
	re := regexp.MustCompile(`^\s+([A-Za-z0-9]+)=true\|false \((ALPHA|BETA) - default=(true|false)\)(?:, or .*)?(?: \(DEPRECATED: .*\))?$`)
	gates := map[string]Gate{}
	for _, l := range lines {
		m := re.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("a line of the kubelet's --feature-gates help that is not a gate: %q", l)
		}
		stage := Alpha
		if m[2] == "BETA" {
			stage = Beta
		}
		gates[m[1]] = Gate{Name: m[1], Stage: stage, Default: m[3] == "true"}
	}
	if len(gates) < 10 {
		t.Fatalf("the kubelet's --help lists %d gates:\n%s", len(gates), section)
	}
	return gates
}

// A kubelet runs a kubelet binary with feature gates, to stop at them or right after.
type kubelet struct {
	t   *testing.T
	bin string
	dir string // its --root-dir and --cert-dir are under it, never made
}

// run returns what the kubelet printed given gates.
func (k *kubelet) run(gates map[string]bool) string {
	var kv []string
	for n, v := range gates {
		kv = append(kv, fmt.Sprintf("%s=%v", n, v))
	}
	slices.Sort(kv)
	cmd := exec.Command(k.bin, "--root-dir="+filepath.Join(k.dir, "root"), "--cert-dir="+filepath.Join(k.dir, "pki"),
		"--feature-gates="+strings.Join(kv, ","), stopLabel)
	cmd.Dir = k.dir
	out, err := cmd.CombinedOutput()
	if err == nil {
		k.t.Errorf("%s exited 0 with --feature-gates and %s:\n%s", k.bin, stopLabel, out)
	}
	return string(out)
}

// each runs the kubelet with each gate of names set to true, four at a time, and
// calls check with what it printed.
func (k *kubelet) each(names []string, check func(name, out string)) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for _, n := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out := k.run(map[string]bool{n: true})
			mu.Lock()
			defer mu.Unlock()
			check(n, out)
		}()
	}
	wg.Wait()
}
