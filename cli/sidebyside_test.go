package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/internal/goldencase"
	"github.com/eksboot/eksboot/internal/imagefixture"
	"github.com/eksboot/eksboot/kubeletconf/kubeletgates"
	"github.com/eksboot/eksboot/kubeletconf/kubelettest"
)

// forcedInput is a value the kubelet refuses, as a user gives it to eksboot
// (--kubelet-extra-args) and as the oracle forces it onto the kubelet.
type forcedInput struct {
	name      string
	extraArgs string
	force     kubelettest.Force
	eksboot   string // a part of eksboot's refusal
}

// forcedInputs are the refusals issue 35 names, for kubelet 1.<minor>: the gate
// inputs are that minor's own, a gate it lacks though an earlier kubelet had it
// and a gate it has locked, set against the lock.
func forcedInputs(t *testing.T, minor int) []forcedInput {
	typo := strings.Replace("memory.available", "ilable", "ilble", 1)
	in := []forcedInput{
		{"max-pods", "--max-pods=abc", kubelettest.Force{Args: []string{"--max-pods=abc"}}, "--max-pods takes a whole number"},
		{"unknown-flag", "--nosuch=1", kubelettest.Force{Args: []string{"--nosuch=1"}}, "has no flag --nosuch"},
		{"node-role-label", "--node-labels=node-role.kubernetes.io/worker=true", kubelettest.Force{Args: []string{"--node-labels=node-role.kubernetes.io/worker=true"}}, `key "node-role.kubernetes.io/worker" is in the kubernetes.io or k8s.io namespace`},
		{"eviction-signal", "--eviction-hard=" + typo + "<100Mi", kubelettest.Force{Config: map[string]any{"evictionHard": map[string]any{typo: "100Mi"}}}, typo + " is not an eviction signal"},
		{"cpu-manager-policy", "--cpu-manager-policy=bogus", kubelettest.Force{Config: map[string]any{"cpuManagerPolicy": "bogus"}}, `"bogus": want none or static`},
	}
	removed, locked := "", ""
	if since, ok := kubeletgates.Removed(minor, "DynamicResourceAllocation"); ok && since == minor {
		removed = "DynamicResourceAllocation" // the gate that stopped 1.38
	}
	for m := minor - 1; m >= kubeletgates.Minors()[0] && removed == ""; m-- {
		for _, g := range kubeletgates.Gates(m) {
			if since, ok := kubeletgates.Removed(minor, g.Name); ok && since == minor {
				removed = g.Name
				break
			}
		}
	}
	for _, g := range kubeletgates.Gates(minor) {
		if g.Locked && g.Stage == kubeletgates.GA {
			locked = g.Name
			in = append(in, forcedInput{
				"locked-gate", fmt.Sprintf("--feature-gates=%s=%t", g.Name, !g.Default),
				kubelettest.Force{FeatureGates: map[string]bool{g.Name: !g.Default}},
				g.Name + " is GA and locked to",
			})
			break
		}
	}
	if removed == "" || locked == "" {
		t.Fatalf("kubelet 1.%d: no gate removed in it (%q) or locked in it (%q) to try", minor, removed, locked)
	}
	return append(in, forcedInput{
		"removed-gate", "--feature-gates=" + removed + "=true",
		kubelettest.Force{FeatureGates: map[string]bool{removed: true}},
		"no feature gate " + removed + " (removed in",
	})
}

// TestRefusalsBesideTheKubelets: for the kubelet EKSBOOT_KUBELET names (.ci/run runs
// it for every kubelet the boxes build), each value of forcedInputs given in
// bootstrap.sh's --kubelet-extra-args on an AL2023 image of that kubelet is refused
// by eksboot, exit 2, one line, nothing written; and the same value forced onto
// that kubelet, given eksboot's files for a sample it accepts, is refused by the
// kubelet itself. Both lines are logged side by side.
func TestRefusalsBesideTheKubelets(t *testing.T) {
	k, fake := kubelettest.FromEnv(t)
	offline(t)
	var s sample
	for _, c := range loadSamples(t) {
		if c.name == "13-eks-mng-al2023-merged-by-eks" {
			s = c
		}
	}
	root, code, stderr := al2023Node(t, s, k.Version)
	if code != 0 {
		t.Fatalf("eksboot: exit %d:\n%s", code, stderr)
	}
	if r, err := kubelettest.Run(context.Background(), t, k, fake, root, kubelettest.Force{}); err != nil || !r.Accepted {
		t.Fatalf("kubelet %s refuses eksboot's files with no input forced (%v): %s", k.Version, err, r.Line)
	}
	golden, err := goldencase.Load("../testdata/golden/01-m5large-usw2-vpc192")
	must(t, err)
	for _, in := range forcedInputs(t, k.Minor) {
		t.Run(in.name, func(t *testing.T) {
			code, line, wrote := eksbootRefusal(t, golden, k.Version, in.extraArgs)
			if code != 2 || !strings.Contains(line, in.eksboot) || !strings.Contains(line, fmt.Sprintf("kubelet 1.%d", k.Minor)) || wrote != 0 {
				t.Errorf("eksboot: exit %d, %d files written, %q; want exit 2, nothing written, a line with %q", code, wrote, line, in.eksboot)
			}
			kubeletLine, _ := kubelettest.Refusal(t, k, fake, root, in.force)
			t.Logf("outcome: %s\n  eksboot:            %s\n  kubelet %s: %s", in.name, line, k.Version, kubeletLine)
		})
	}
}

// eksbootRefusal runs bootstrap.sh with golden case c's command line and extra on a
// fresh AL2023 image of kubelet kv: the exit status, the last line of stderr (the
// error) and how many files changed.
func eksbootRefusal(t *testing.T, c goldencase.Case, kv, extra string) (int, string, int) {
	t.Helper()
	nodeMu.Lock()
	defer nodeMu.Unlock()
	fakes := c.StartFor(t)
	old := envHook
	t.Cleanup(func() { envHook = old })
	envHook = func(env *bootstrap.Env) {
		env.CPUs = c.CPUs
		env.DNSNameAttempts, env.DNSNameInterval = 1, 0
	}
	dir := t.TempDir()
	must(t, imagefixture.AL2023{KubeletVersion: kv}.Write(dir))
	before, err := readTree(dir)
	must(t, err)
	argv := append([]string{"/etc/eks/bootstrap.sh"}, c.Args...)
	argv = append(argv, "--root", dir, "--no-restart", "--imds-endpoint", fakes.IMDS.URL(), "--kubelet-extra-args", extra)
	var stderr bytes.Buffer
	code := Main(argv, io.Discard, &stderr)
	after, err := readTree(dir)
	must(t, err)
	wrote := 0
	for p, b := range after {
		if old, ok := before[p]; !ok || !bytes.Equal(old, b) {
			wrote++
		}
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	return code, lines[len(lines)-1], wrote
}
