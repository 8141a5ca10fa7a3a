package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/internal/imagefixture"
	"github.com/eksboot/eksboot/kubeletconf/kubelettest"
)

// nodeMu serialises the eksboot runs of the real-kubelet tests (cli.Main and the
// simulation of the samples' scripts share process state); the kubelets run side
// by side.
var nodeMu sync.Mutex

// al2023Node boots a simulated m5.large with the sample's user data, as runNode does,
// on an AL2023 image whose kubelet is version kv ("v1.38.0-beta.0", the image's
// /etc/eks/kubelet-version.txt, which eksboot reads), and returns the root. code and
// stderr are eksboot's exit status and messages: a sample eksboot refuses is written
// nothing.
func al2023Node(t *testing.T, s sample, kv string) (root string, code int, stderr string) {
	t.Helper()
	nodeMu.Lock()
	defer nodeMu.Unlock()
	var args []string
	if s.want.Entry == "bootstrap.sh" {
		args = scriptArgs(t, s).args // the AL2 image's files the scripts edit are not an AL2023 image's
	}
	inst := imdstest.DefaultInstance()
	inst.UserData = string(s.raw)
	srv, err := imdstest.NewServer(inst)
	must(t, err)
	defer srv.Close()
	root = t.TempDir()
	must(t, imagefixture.AL2023{KubeletVersion: kv}.Write(root))
	common := []string{"--root", root, "--no-restart", "--imds-endpoint", srv.URL()}
	argv := append([]string{"eksboot", "init"}, common...)
	if s.want.Entry != "nodeconfig" {
		argv = append(append([]string{"/etc/eks/bootstrap.sh"}, args...), common...)
	}
	var errb bytes.Buffer
	code = Main(argv, io.Discard, &errb)
	return root, code, errb.String()
}

// refusedToday are the cases refused today, first match first: each is a finding
// or an input that must be refused, not a pass. A case listed here must be refused
// as it says, by the kubelet (its refusal line) or by eksboot itself (exit status not
// 0, nothing written, its error line), and the test fails when the refusal changes or
// goes: update the row with the change. Every other case must be accepted by the
// kubelet.
var refusedToday = []refusal{
	{
		sample: "09-karpenter-al2023-with-custom-userdata", minors: [2]int{34, 38}, by: "eksboot",
		line: "spec.kubelet.config.imageGCHighThresholdPercent: kubelet 1.",
		why: "for good: the sample's imageGCHighThresholdPercent 80 is not above the default low threshold, 80; " +
			"the kubelet's own line, when eksboot wrote it: \"invalid configuration: imageGCLowThresholdPercent " +
			"(--image-gc-low-threshold) 80 must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) 80\"",
	},
	{
		sample: "11-terraform-cloudinit-al2023-mime", minors: [2]int{34, 38}, by: "eksboot",
		line: "spec.kubelet.config.featureGates.DisableKubeletCloudCredentialProviders: kubelet 1.",
		why: "for good: the sample's gate is gone from these kubelets; the kubelet's own line, when eksboot wrote it: " +
			"\"panic: failed to merge global and in-flight KubeletConfiguration while setting defaults, error: " +
			"unrecognized feature gate: DisableKubeletCloudCredentialProviders\"",
	},
}

// refusal is a case refused today.
type refusal struct {
	sample string // a sample's name, or "*" for all
	minors [2]int // the kubelet minors, first and last
	by     string // "kubelet" (its refusal line) or "eksboot" (its error line)
	line   string // a part of the refusal line
	why    string // why, and the change that would end it
}

// expectedRefusal is the first row of refusedToday for the case.
func expectedRefusal(minor int, sample string) (refusal, bool) {
	for _, r := range refusedToday {
		if (r.sample == "*" || r.sample == sample) && r.minors[0] <= minor && minor <= r.minors[1] {
			return r, true
		}
	}
	return refusal{}, false
}

// TestRealKubeletAcceptsEverySample gives the kubelet EKSBOOT_KUBELET names (make e2e
// lists the kubelets it built in the cache's last-run.env; .ci/run runs this test for
// each) what eksboot writes for every sample user data of testdata/userdata on an
// AL2023 image of that kubelet's version, and requires the kubelet to accept it:
// to pass every check of its flags and configuration, those it makes only after it
// connected to its container runtime included (kubeletconf/kubelettest). Each case's
// outcome is logged: "accepted" with the kubelet's line, or its refusal line.
func TestRealKubeletAcceptsEverySample(t *testing.T) {
	k, fake := kubelettest.FromEnv(t)
	offline(t)
	t.Logf("kubelet %s (%s)", k.Version, k.Path)
	for _, s := range loadSamples(t) {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			root, code, stderr := al2023Node(t, s, k.Version)
			want, listed := expectedRefusal(k.Minor, s.name)
			if code != 0 {
				line := errorLine(stderr)
				t.Logf("outcome: kubelet %s, %s: eksboot refused (exit %d): %s", k.Version, s.name, code, line)
				switch {
				case !listed:
					t.Fatalf("eksboot: exit %d, nothing for the kubelet to judge:\n%s", code, stderr)
				case want.by != "eksboot" || !strings.Contains(line, want.line):
					t.Fatalf("refusedToday says the %s refuses it (%q: %s); eksboot refuses it now (update the row):\n%s", want.by, want.line, want.why, stderr)
				}
				t.Logf("known refusal: %s", want.why)
				return
			}
			r, err := kubelettest.Run(context.Background(), t, k, fake, root, kubelettest.Force{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("outcome: kubelet %s, %s: %s", k.Version, s.name, r.Summary())
			switch {
			case listed && r.Accepted:
				t.Errorf("refusedToday says the %s refuses it (%s), but the kubelet accepts it now: update the row", want.by, want.why)
			case listed && (want.by != "kubelet" || !strings.Contains(r.Line, want.line)):
				t.Errorf("refusedToday says the %s refuses it with %q (%s); the kubelet says:\n%s", want.by, want.line, want.why, r.Line)
			case listed:
				t.Logf("known refusal: %s", want.why)
			case !r.Accepted:
				t.Errorf("kubelet %s refuses what eksboot wrote for %s: %s\ncommand line: %q\nedits: %q\nits last lines:\n%s",
					k.Version, s.name, r.Line, r.Argv, r.Edits, lastLines(r.Log, 15))
			}
		})
	}
}

// TestRealKubeletRefusesForcedInputs is the oracle of eksboot's refusals
// (kubelettest.Refusal): the kubelet EKSBOOT_KUBELET names, given what eksboot writes
// for a NodeConfig sample plus one input a user could carry, refuses it with its own
// line. An unknown flag is refused while the flags are parsed, a misspelt eviction
// signal only after the kubelet connected to its runtime: the fake runtime's log must
// show that connection. The same files with nothing forced must be accepted.
func TestRealKubeletRefusesForcedInputs(t *testing.T) {
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
	if want, ok := expectedRefusal(k.Minor, s.name); ok {
		t.Fatalf("refusedToday lists %s on 1.%d (%s): the oracle needs files the kubelet accepts", s.name, k.Minor, want.line)
	}
	base, err := kubelettest.Run(context.Background(), t, k, fake, root, kubelettest.Force{})
	if err != nil {
		t.Fatal(err)
	}
	if !base.Accepted {
		t.Fatalf("kubelet %s refuses eksboot's files with no input forced: %s", k.Version, base.Line)
	}
	for _, c := range []struct {
		name    string
		force   kubelettest.Force
		want    string
		runtime bool // refused after the runtime connection
	}{
		{"unknown-flag", kubelettest.Force{Args: []string{"--nosuch=1"}}, "unknown flag: --nosuch", false},
		{
			"misspelt-eviction-signal",
			kubelettest.Force{Config: map[string]any{"evictionHard": map[string]any{"memory.availble": "100Mi"}}},
			"unsupported eviction signal memory.availble", true,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			line, r := kubelettest.Refusal(t, k, fake, root, c.force)
			t.Logf("outcome: kubelet %s, %s: %s", k.Version, c.name, line)
			if !strings.Contains(line, c.want) {
				t.Errorf("refusal line %q, want it to say %q", line, c.want)
			}
			connected := strings.Join(r.CRICalls, "\n")
			if c.runtime && !strings.Contains(connected, "RuntimeService/Version OK") {
				t.Errorf("refused without having connected to the runtime; the fake runtime's calls:\n%s", connected)
			}
		})
	}
}

// errorLine is eksboot's error line in its messages (the last that says "error"),
// else its last line.
func errorLine(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], "error") {
			return strings.TrimSpace(lines[i])
		}
	}
	return lines[len(lines)-1]
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
