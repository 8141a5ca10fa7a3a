package rendercmd

import (
	"bytes"
	"encoding/base64"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/cli"
)

// sampleDir holds the user-data samples of every launch tool.
const sampleDir = "../../testdata/userdata"

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestRenderCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		must(t, os.WriteFile(p, []byte(s), 0o644))
		return p
	}
	sample := filepath.Join(sampleDir, "08-karpenter-al2023-nodeconfig.userdata")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in stdout for 0, in stderr otherwise; "a|b": a or b
	}{
		{"nodeconfig", []string{"--user-data", sample, "--instance-type", "m5.large"}, 0, "\"maxPods\": 29,"},
		{"other type and region", []string{"--user-data", filepath.Join(sampleDir, "11-terraform-cloudinit-al2023-mime.userdata"), "--instance-type", "c5.4xlarge", "--region", "eu-west-1"}, 0, "\"maxPods\": 234,"},
		{"the CA is not printed", []string{"--user-data", sample, "--instance-type", "m5.large"}, 0, "==> /etc/kubernetes/pki/ca.crt: the cluster CA, 1115 bytes, sha256 "},
		{"al2023 image", []string{"--user-data", sample, "--instance-type", "m5.large", "--image-profile", "al2023", "--kubelet-version", "1.35.1"}, 0, "sandbox = 'localhost/kubernetes/pause:latest'"},
		{"al2023 kubelet 1.35 flags", []string{"--user-data", sample, "--instance-type", "m5.large", "--image-profile", "al2023", "--kubelet-version", "1.35.1"}, 0, "--cloud-provider=external --runtime-cgroups=/runtime.slice/containerd.service"},
		{"bad profile", []string{"--user-data", sample, "--instance-type", "m5.large", "--image-profile", "al3"}, 2, `--image-profile "al3": want al2 or al2023`},
		{
			"the image's own drop-in",
			[]string{
				"--user-data", sample, "--instance-type", "m5.large", "--image-profile", "al2023", "--kubelet-version", "1.35.1",
				"--image-file", "/etc/kubernetes/kubelet/config.json.d/90-mine.conf=" + write("90.conf", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nregistryPullQPS: 3\n"),
			},
			0,
			"==> the configuration the kubelet runs with: kubelet-config.json with the drop-ins of /etc/kubernetes/kubelet/config.json.d over it",
		},
		{
			"a bad drop-in of the image",
			[]string{
				"--user-data", sample, "--instance-type", "m5.large", "--image-profile", "al2023", "--kubelet-version", "1.35.1",
				"--image-file", "/etc/kubernetes/kubelet/config.json.d/90-mine.conf=" + write("bad.conf", "maxPods: 3\n"),
			},
			1,
			"/etc/kubernetes/kubelet/config.json.d/90-mine.conf (a drop-in the kubelet reads): apiVersion: missing",
		},
		{"--image-file without LOCAL", []string{"--user-data", sample, "--instance-type", "m5.large", "--image-file", "/etc/x"}, 2, `--image-file "/etc/x": want PATH=LOCAL`},
		{"--image-file of a relative path", []string{"--user-data", sample, "--instance-type", "m5.large", "--image-file", "etc/x=" + sample}, 2, `--image-file "etc/x": PATH must be an absolute, clean node path`},
		{"--image-file of a missing file", []string{"--user-data", sample, "--instance-type", "m5.large", "--image-file", "/etc/x=" + filepath.Join(dir, "nope")}, 2, "--image-file /etc/x: read "},
		{"bad kubelet version", []string{"--user-data", sample, "--instance-type", "m5.large", "--kubelet-version", "latest"}, 2, `--kubelet-version "latest"`},
		{"no type", []string{"--user-data", sample}, 2, "give --user-data FILE and --instance-type TYPE"},
		{"bad type", []string{"--user-data", sample, "--instance-type", "m5.large;rm"}, 2, "--instance-type"},
		{"missing file", []string{"--user-data", filepath.Join(dir, "nope"), "--instance-type", "m5.large"}, 2, "no such file"},
		{
			"unset variable: empty, as in bash",
			[]string{"--user-data", write("u.sh", "#!/bin/bash\n/etc/eks/bootstrap.sh \"$NAME\"\n"), "--instance-type", "m5.large"},
			1,
			"eksboot render: error: user data: part 1 (text/x-shellscript) line 2: bootstrap.sh: CLUSTER_NAME is missing",
		},
		{
			"known only at boot",
			[]string{"--user-data", write("k.sh", "#!/bin/bash\nN=$(aws ssm get-parameter --name /c --query Parameter.Value --output text)\n/etc/eks/bootstrap.sh \"$N\"\n"), "--instance-type", "m5.large"},
			1,
			"eksboot render: error: user data: part 1 (text/x-shellscript) line 3: bootstrap.sh's arguments depend on the output of aws ssm get-parameter --name /c --query Parameter.Value --ou… (part 1 (text/x-shellscript) line 2), known only when the node boots (render does not guess it)",
		},
		{
			"an endless loop",
			[]string{"--user-data", write("l.sh", "#!/bin/bash\nwhile true; do sleep 1; done\n/etc/eks/bootstrap.sh c\n"), "--instance-type", "m5.large"},
			1,
			// or, on a loaded machine, the 5 s bound first: both are the right refusal
			"eksboot render: error: user data: the user data's scripts were stopped: more than 200000 commands run (an endless loop?)|" +
				"eksboot render: error: user data: the user data's scripts were stopped: still running after 5s (an endless loop?)",
		},
		{"bad region", []string{"--user-data", sample, "--instance-type", "m5.large", "--region", "mars"}, 2, `--region "mars": want a region name such as us-west-2`},
		{
			"bad flag in the script",
			[]string{"--user-data", write("f.sh", "#!/bin/bash\n/etc/eks/bootstrap.sh c --no-such-flag\n"), "--instance-type", "m5.large"},
			1,
			"eksboot render: error: user data: part 1 (text/x-shellscript) line 2: bootstrap.sh: unknown flag: --no-such-flag",
		},
		{
			"bad value in the script",
			[]string{"--user-data", write("v.sh", "#!/bin/bash\n/etc/eks/bootstrap.sh c --b64-cluster-ca aGVsbG8= --apiserver-endpoint https://x\n"), "--instance-type", "m5.large"},
			1,
			"--b64-cluster-ca",
		},
		{
			"bad NodeConfig value",
			[]string{"--user-data", write("b.yaml", "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: {cluster: {name: c, apiServerEndpoint: 'http://x', certificateAuthority: aGVsbG8=, cidr: 10.100.0.0/16}}\n"), "--instance-type", "m5.large"},
			1,
			`eksboot render: error: user data: merged NodeConfig: spec.cluster.certificateAuthority: `,
		},
		{
			"nothing to render",
			[]string{"--user-data", write("n.sh", "#!/bin/bash\necho hi\n"), "--instance-type", "m5.large"},
			1,
			"no NodeConfig part and no /etc/eks/bootstrap.sh command line in the user data (part 1 (text/x-shellscript))",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(append([]string{"eksboot render"}, tc.args...), &stdout, &stderr)
			out := stdout.String()
			if tc.code != 0 {
				out = stderr.String()
			}
			found := false
			for _, w := range strings.Split(tc.want, "|") {
				found = found || strings.Contains(out, w)
			}
			if code != tc.code || !found {
				t.Errorf("exit %d, want %d with %q in\n%s", code, tc.code, tc.want, out)
			}
		})
	}
}

// TestRenderReportsLocalDisks: render runs no helper, but says that the node sets up
// its instance-store disks before anything else.
func TestRenderReportsLocalDisks(t *testing.T) {
	ca, err := os.ReadFile("../../testdata/golden/01-m5large-usw2-vpc192/etc/kubernetes/pki/ca.crt")
	must(t, err)
	p := filepath.Join(t.TempDir(), "d.sh")
	script := "#!/bin/bash\n/etc/eks/bootstrap.sh c --b64-cluster-ca " + base64.StdEncoding.EncodeToString(ca) +
		" --apiserver-endpoint https://x.example.com --local-disks raid0\n"
	must(t, os.WriteFile(p, []byte(script), 0o644))
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"eksboot render", "--user-data", p, "--instance-type", "m5.large"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "setup-local-disks raid0 (render does not run it)") {
		t.Errorf("stderr does not report the local disks:\n%s", stderr.String())
	}
}

// TestRenderSetsItsMemoryLimit: render sets its soft memory limit, keeps a lower one
// (GOMEMLIMIT), and eksboot's commands set none.
func TestRenderSetsItsMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	var stdout, stderr bytes.Buffer
	if code := cli.Main([]string{"eksboot", "version"}, &stdout, &stderr); code != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("version: exit %d, memory limit %d, want none", code, debug.SetMemoryLimit(-1))
	}
	sample := filepath.Join(sampleDir, "08-karpenter-al2023-nodeconfig.userdata")
	render := []string{"eksboot render", "--user-data", sample, "--instance-type", "m5.large"}
	if code := Main(render, &stdout, &stderr); code != 0 || debug.SetMemoryLimit(-1) != memoryLimit {
		t.Errorf("render: exit %d, memory limit %d, want %d\n%s", code, debug.SetMemoryLimit(-1), memoryLimit, stderr.String())
	}
	debug.SetMemoryLimit(64 << 20)
	if code := Main(render, &stdout, &stderr); code != 0 || debug.SetMemoryLimit(-1) != 64<<20 {
		t.Errorf("render under a lower limit: exit %d, memory limit %d, want it kept", code, debug.SetMemoryLimit(-1))
	}
}

// TestHelpIsEksbootRendersHelp: eksboot-render --help and -h print what `eksboot render
// --help` prints (which eksboot answers without eksboot-render), under the name it
// was run as.
func TestHelpIsEksbootRendersHelp(t *testing.T) {
	var want, stderr bytes.Buffer
	if code := cli.Main([]string{"eksboot", "render", "--help"}, &want, &stderr); code != 0 {
		t.Fatalf("eksboot render --help: exit %d\n%s", code, stderr.String())
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"eksboot render", "--help"}, want.String()},
		{[]string{"eksboot render", "-h"}, want.String()},
		{[]string{"/usr/bin/eksboot-render", "--help"}, strings.Replace(want.String(), "Usage: eksboot render ", "Usage: eksboot-render ", 1)},
	} {
		var stdout bytes.Buffer
		if code := Main(tc.args, &stdout, &stderr); code != 0 || stdout.String() != tc.want || stderr.Len() > 0 {
			t.Errorf("%q: exit %d\n%s\nwant\n%s\nstderr %q", tc.args, code, stdout.String(), tc.want, stderr.String())
		}
	}
	if !strings.HasPrefix(want.String(), "Usage: eksboot render --user-data FILE --instance-type TYPE [options]\n") {
		t.Errorf("eksboot render --help:\n%s", want.String())
	}
}
