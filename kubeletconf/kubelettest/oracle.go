package kubelettest

import (
	"context"
	"testing"
)

// Refusal is the oracle of eksboot's refusals: it runs kubelet k on the files
// eksboot wrote under root with one forced input (a flag, a configuration field, a
// feature gate) and returns the kubelet's own refusal line, to be shown beside
// eksboot's (e.g. for --max-pods=abc, --nosuch=1, a node-role.kubernetes.io label,
// evictionHard memory.availble, a removed or locked gate, cpuManagerPolicy bogus),
// and the whole result. The test fails when the kubelet accepts the input or the run
// decides nothing.
func Refusal(t testing.TB, k Kubelet, fakeCRI, root string, force Force) (string, Result) {
	t.Helper()
	r, err := Run(context.Background(), t, k, fakeCRI, root, force)
	if err != nil {
		t.Fatal(err)
	}
	if r.Accepted {
		t.Fatalf("kubelet %s accepts %q (%s)", k.Version, r.Edits, r.Line)
	}
	return r.Line, r
}
