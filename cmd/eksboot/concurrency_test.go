package main

import (
	"bytes"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/eksboot/eksboot/internal/testtools"
)

// TestTwoRunsAtOnceMakeOneNode starts two runs of the binary on the same root at the
// same time, 20 rounds, each with other inputs (cloud-init's script and the run-phase
// unit disagreeing): both must exit 0 (the second waits for the run lock) and the
// tree must be exactly what the two make one after the other, in either order. Before
// the run lock, one run's temporary-file clean-up deleted the other's temporary files
// ("rename …/.ca.crt.eksboot-N: no such file or directory") and a node could end up
// half one run's and half the other's.
func TestTwoRunsAtOnceMakeOneNode(t *testing.T) {
	seed := t.TempDir()
	env, args := startCase(t, "01-m5large-usw2-vpc192", seed)
	base := tree(t, seed)
	fresh := func() string { // copyTree, and the root itself even when the case has no files
		root := copyTree(t, base)
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		return root
	}
	withRoot := func(a []string, root string) []string {
		out := append([]string{}, a...)
		for i := range out {
			if out[i] == "--root" {
				out[i+1] = root
			}
		}
		return out
	}
	inputs := [2][]string{
		args,
		append(append([]string{}, args...), "--kubelet-extra-args", "--v=3", "--dns-cluster-ip", "10.9.0.10", "--graceful-shutdown"),
	}
	// The two serial outcomes: a then b, and b then a.
	var serial [2]map[string]string
	for i := range serial {
		root := fresh()
		for _, in := range [][]string{inputs[i], inputs[1-i]} {
			if code, _, stderr := run(t, env, "", withRoot(in, root)...); code != 0 {
				t.Fatalf("serial run: exit %d\n%s", code, stderr)
			}
		}
		serial[i] = tree(t, root)
	}

	for round := range 20 {
		root := fresh()
		var wg sync.WaitGroup
		codes, stderrs := [2]int{}, [2]bytes.Buffer{}
		for i, in := range inputs {
			cmd := exec.Command(binary, withRoot(in, root)...)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			cmd.Stderr = &stderrs[i]
			wg.Go(func() {
				if err := cmd.Run(); err != nil {
					codes[i] = -1
					if ee, ok := err.(*exec.ExitError); ok {
						codes[i] = ee.ExitCode()
					}
				}
			})
		}
		wg.Wait()
		for i := range codes {
			if codes[i] != 0 {
				t.Errorf("round %d, run %d: exit %d\n%s", round, i, codes[i], stderrs[i].String())
			}
		}
		got := targets(tree(t, root))
		if !equalTrees(got, serial[0]) && !equalTrees(got, serial[1]) {
			t.Errorf("round %d: the node is neither a-then-b nor b-then-a; against a-then-b:", round)
			testtools.CompareTrees(t, got, serial[0])
		}
		if t.Failed() {
			return
		}
	}
}

func equalTrees(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
