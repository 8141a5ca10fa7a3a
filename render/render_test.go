package render

import (
	"context"
	"encoding/base64"
	"os"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/eksboot/eksboot/kubeletconf"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func goldenCA(t *testing.T) string {
	t.Helper()
	ca, err := os.ReadFile("../testdata/golden/01-m5large-usw2-vpc192/etc/kubernetes/pki/ca.crt")
	must(t, err)
	return base64.StdEncoding.EncodeToString(ca)
}

func renderScript(t *testing.T, s string) (*Result, error) {
	t.Helper()
	return Render(context.Background(), []byte(s), Options{
		InstanceType: "m5.large", Region: "us-west-2",
		KubeletVersion: kubeletconf.Version{Major: 1, Minor: 32, Patch: 9}, Profile: "al2", Log: zap.NewNop(),
	})
}

// TestRenderIssueExamples: the scripts the hand-written lexer got wrong render as bash
// runs them.
func TestRenderIssueExamples(t *testing.T) {
	ca := goldenCA(t)
	for _, tc := range []struct {
		name, script string
		cluster      string
		want         []string // in the kubelet flags
	}{
		{"a quoted ) in $(...)", `NAME=$(echo "a)b" | cut -d')' -f1)` + "\n/etc/eks/bootstrap.sh \"$NAME\"", "a", nil},
		{"$'...' quoting", `/etc/eks/bootstrap.sh c --kubelet-extra-args $'--node-labels=a=b --max-pods=20'`, "c", []string{"--node-labels=a=b", "--max-pods=20"}},
		{"defaults", `A=from-a` + "\n" + `/etc/eks/bootstrap.sh ${X:-${A}} --kubelet-extra-args "${Y:---max-pods=7}"`, "from-a", []string{"--max-pods=7"}},
		{"a prefix assignment", `KUBELET_EXTRA_ARGS=--max-pods=20 /etc/eks/bootstrap.sh c`, "c", []string{"--max-pods=20"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := "#!/bin/bash\n" + strings.Replace(tc.script, "/etc/eks/bootstrap.sh", "/etc/eks/bootstrap.sh --b64-cluster-ca "+ca+" --apiserver-endpoint https://x.example.com", 1) + "\n"
			r, err := renderScript(t, s)
			if err != nil {
				t.Fatal(err)
			}
			if kc := string(r.Tree["/var/lib/kubelet/kubeconfig"]); !strings.Contains(kc, "- \""+tc.cluster+"\"\n") {
				t.Errorf("kubeconfig does not name cluster %q:\n%s", tc.cluster, kc)
			}
			for _, w := range tc.want {
				if !strings.Contains(" "+r.Flags+" ", " "+w+" ") {
					t.Errorf("flags %q lack %q", r.Flags, w)
				}
			}
		})
	}
}

// TestRenderABootstrapHelpCall: a script whose bootstrap.sh call asks for its help
// configures nothing, and says so (it was a nil Config, and a panic).
func TestRenderABootstrapHelpCall(t *testing.T) {
	_, err := renderScript(t, "#!/bin/bash\n/etc/eks/bootstrap.sh my-cluster -h\n")
	if err == nil || !strings.Contains(err.Error(), "bootstrap.sh: -h/--help: the call prints bootstrap.sh's help and configures nothing") {
		t.Errorf("error %v", err)
	}
}
