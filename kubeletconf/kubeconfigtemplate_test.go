package kubeletconf

import (
	"os"
	"strings"
	"testing"
)

// TestKubeconfigTemplate: the AMI's template, filled in as bootstrap.sh's sed did, is
// the kubeconfig bootstrap.sh wrote (golden case 01) and the one Render makes; a
// template the user data edited keeps its edits; what is no kubeconfig is refused.
func TestKubeconfigTemplate(t *testing.T) {
	want, err := os.ReadFile("../testdata/golden/01-m5large-usw2-vpc192/var/lib/kubelet/kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	const server = "https://0123456789ABCDEF0123456789ABCDEF.gr7.us-west-2.eks.amazonaws.com"
	got, err := FillKubeconfigTemplate(KubeconfigTemplate(), server, "us-west-2", "demo")
	if err != nil || string(got) != string(want) {
		t.Fatalf("the AMI's template filled in: %v\n%s\nwant bootstrap.sh's\n%s", err, got, want)
	}
	if r := (Kubeconfig{Server: server, ClusterName: "demo", Region: "us-west-2", CAFile: DefaultCAFile}).Render(); string(r) != string(want) {
		t.Errorf("Render:\n%s", r)
	}
	if !HasKubeconfigPlaceholder(KubeconfigTemplate()) || HasKubeconfigPlaceholder(want) {
		t.Error("HasKubeconfigPlaceholder")
	}
	edited := strings.Replace(string(KubeconfigTemplate()), "/usr/bin/aws-iam-authenticator", "/opt/iam/bin/aws-iam-authenticator", 1)
	got, err = FillKubeconfigTemplate([]byte(edited), server, "us-west-2", "demo")
	if err != nil || !strings.Contains(string(got), "command: /opt/iam/bin/aws-iam-authenticator") || strings.Contains(string(got), "CLUSTER_NAME") {
		t.Errorf("an edited template: %v\n%s", err, got)
	}
	for name, tmpl := range map[string]string{
		"not YAML":            "server: MASTER_ENDPOINT\n  - [",
		"another kind":        "kind: Pod\nserver: MASTER_ENDPOINT\n",
		"a control character": "kind: Config\nserver: \"MASTER_ENDPOINT\\u001b\"\n",
	} {
		if err := CheckKubeconfigTemplate([]byte(tmpl)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
