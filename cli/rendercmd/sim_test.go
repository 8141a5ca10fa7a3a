package rendercmd

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/eksboot/eksboot/eksapi/eksapitest"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/render"
)

func goldenCA(t *testing.T) string {
	t.Helper()
	ca, err := os.ReadFile("../../testdata/golden/01-m5large-usw2-vpc192/etc/kubernetes/pki/ca.crt")
	must(t, err)
	return base64.StdEncoding.EncodeToString(ca)
}

func renderScript(t *testing.T, s string) (*render.Result, error) {
	t.Helper()
	return render.Render(context.Background(), []byte(s), render.Options{
		InstanceType: "m5.large", Region: "us-west-2",
		KubeletVersion: kubeletconf.Version{Major: 1, Minor: 32, Patch: 9}, Profile: "al2", Log: zap.NewNop(),
	})
}

// TestRenderSample04: eksctl's self-managed node group (gzip #cloud-config) renders
// the node its scripts make: labels with IMDS's lifecycle and instance ID, the taint,
// --max-pods=40 and kubelet-extra.json merged into kubelet-config.json by jq after
// bootstrap.sh; systemctl is listed as not simulated.
func TestRenderSample04(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(sampleDir, "04-eksctl-nodegroup-al2-cloudconfig.userdata.gz"))
	must(t, err)
	var stdout, stderr bytes.Buffer
	p := filepath.Join(t.TempDir(), "u")
	must(t, os.WriteFile(p, raw, 0o644))
	if code := Main([]string{"eksboot render", "--user-data", p, "--instance-type", "m5.large"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"from part 1 (text/cloud-config) runcmd line 3: /var/lib/cloud/scripts/eksctl/bootstrap.al2.sh line 10: bootstrap.sh",
		"--node-labels=alpha.eksctl.io/cluster-name=batch-cluster,alpha.eksctl.io/nodegroup-name=ng-workers,role=worker,node-lifecycle=on-demand,alpha.eksctl.io/instance-id=i-0123456789abcdef0 --register-with-taints=dedicated=workers:NoSchedule --max-pods=40",
		"==> /etc/kubernetes/kubelet/kubelet-config.json (as the user data's scripts leave it, after bootstrap.sh)",
		"part 1 (text/cloud-config): write_files: writes /etc/eksctl/kubelet.env",
		"not simulated (no-ops here; on the node they run): sysctl, systemctl",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q:\n%s", want, out)
		}
	}
	r, err := render.Render(context.Background(), raw, render.Options{
		InstanceType: "m5.large", Region: "us-west-2",
		KubeletVersion: kubeletconf.Version{Major: 1, Minor: 32, Patch: 9}, Profile: "al2", Log: zap.NewNop(),
	})
	must(t, err)
	var kc struct {
		MaxPods                         int    `json:"maxPods"`
		ShutdownGracePeriod             string `json:"shutdownGracePeriod"`
		ShutdownGracePeriodCriticalPods string `json:"shutdownGracePeriodCriticalPods"`
		ClusterDNS                      []string
	}
	must(t, json.Unmarshal(r.After["/etc/kubernetes/kubelet/kubelet-config.json"], &kc))
	if kc.MaxPods != 29 || kc.ShutdownGracePeriod != "30s" || kc.ShutdownGracePeriodCriticalPods != "10s" || len(kc.ClusterDNS) != 1 {
		t.Errorf("kubelet-config.json after eksctl's merge: %+v", kc)
	}
}

// TestRenderWithDiscovery: user data that leaves the CA and the endpoint to cluster
// discovery (the course's example) renders, the values discovery supplies shown as
// placeholders with the IAM permission the node needs; with --discover they are
// looked up with the caller's credentials, here from the fake EKS on 127.0.0.1.
func TestRenderWithDiscovery(t *testing.T) {
	script := "#!/bin/bash\n/etc/eks/bootstrap.sh my-cluster --kubelet-extra-args '--max-pods=58 --node-labels=workload=batch' --container-runtime containerd --apiserver-endpoint https://ABCDEF.gr7.us-west-2.eks.amazonaws.com\n"
	p := filepath.Join(t.TempDir(), "u.sh")
	must(t, os.WriteFile(p, []byte(script), 0o644))
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"eksboot render", "--user-data", p, "--instance-type", "m5.large"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"==> /etc/kubernetes/pki/ca.crt: the cluster CA, from eks:DescribeCluster at boot",
		"server: " + render.PlaceholderEndpoint + "\n",
		`"198.51.100.10"`,
		`the node's IAM role needs eks:DescribeCluster on cluster "my-cluster"`,
		"--max-pods=58 --node-labels=workload=batch",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q:\n%s", want, out)
		}
	}

	srv, err := eksapitest.NewServer()
	must(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	srv.AddCluster(eksapitest.Cluster{Name: "my-cluster", Endpoint: "https://ABCDEF.gr7.us-west-2.eks.amazonaws.com", CAData: goldenCA(t), ServiceIPv4CIDR: "172.20.0.0/16"})
	home := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_EKS": srv.URL(), "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret",
		"AWS_CONFIG_FILE": filepath.Join(home, "config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(home, "credentials"),
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_PROFILE": "", "AWS_SESSION_TOKEN": "", "HOME": home,
	} {
		t.Setenv(k, v)
	}
	stdout.Reset()
	stderr.Reset()
	if code := Main([]string{"eksboot render", "--user-data", p, "--instance-type", "m5.large", "--discover"}, &stdout, &stderr); code != 0 {
		t.Fatalf("--discover: exit %d\n%s", code, stderr.String())
	}
	out = stdout.String()
	for _, want := range []string{
		"server: https://ABCDEF.gr7.us-west-2.eks.amazonaws.com\n",
		`"172.20.0.10"`,
		"==> /etc/kubernetes/pki/ca.crt: the cluster CA, 1115 bytes, sha256 ",
		`looked up with your credentials (--discover): cluster "my-cluster" is ACTIVE`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("render --discover lacks %q:\n%s", want, out)
		}
	}
	if srv.Calls() != 1 {
		t.Errorf("%d DescribeCluster calls, want 1", srv.Calls())
	}
	stdout.Reset()
	stderr.Reset()
	script2 := strings.Replace(script, "my-cluster", "other-cluster", 1)
	must(t, os.WriteFile(p, []byte(script2), 0o644))
	if code := Main([]string{"eksboot render", "--user-data", p, "--instance-type", "m5.large", "--discover"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), `cluster discovery for "other-cluster" in us-west-2: ResourceNotFoundException`) {
		t.Errorf("an unknown cluster: exit %d\n%s", code, stderr.String())
	}
}

// TestRenderReportsCallsAndParts: two bootstrap.sh calls are reported, the last one
// rendered; the parts say what they did.
func TestRenderReportsCallsAndParts(t *testing.T) {
	ca := goldenCA(t)
	s := "#!/bin/bash\nfor n in first second; do\n  /etc/eks/bootstrap.sh $n --b64-cluster-ca " + ca + " --apiserver-endpoint https://x.example.com\ndone\nsystemctl enable foo\n"
	r, err := renderScript(t, s)
	must(t, err)
	var b bytes.Buffer
	printRender(&b, r, "m5.large", "us-west-2")
	out := b.String()
	for _, want := range []string{
		"warning: bootstrap.sh is called 2 times (part 1 (text/x-shellscript) line 3; part 1 (text/x-shellscript) line 3): each run rewrites the node; render shows the last",
		"part 1 (text/x-shellscript) line 3: calls bootstrap.sh",
		"not simulated (no-ops here; on the node they run): systemctl",
		"- \"second\"\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q:\n%s", want, out)
		}
	}
}
