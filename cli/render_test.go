package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
		want string // in stdout for 0, in stderr otherwise
	}{
		{"nodeconfig", []string{"--user-data", sample, "--instance-type", "m5.large"}, 0, "\"maxPods\": 29,"},
		{"other type and region", []string{"--user-data", filepath.Join(sampleDir, "11-terraform-cloudinit-al2023-mime.userdata"), "--instance-type", "c5.4xlarge", "--region", "eu-west-1"}, 0, "\"maxPods\": 234,"},
		{"the CA is not printed", []string{"--user-data", sample, "--instance-type", "m5.large"}, 0, "==> /etc/kubernetes/pki/ca.crt: the cluster CA, 1115 bytes, sha256 "},
		{"no type", []string{"--user-data", sample}, 2, "give --user-data FILE and --instance-type TYPE"},
		{"bad type", []string{"--user-data", sample, "--instance-type", "m5.large;rm"}, 2, "--instance-type"},
		{"missing file", []string{"--user-data", filepath.Join(dir, "nope"), "--instance-type", "m5.large"}, 2, "no such file"},
		{"unresolved variable", []string{"--user-data", write("u.sh", "#!/bin/bash\n/etc/eks/bootstrap.sh \"$NAME\"\n"), "--instance-type", "m5.large"}, 1,
			"eksboot render: error: user data: part 1 (text/x-shellscript) line 2: bootstrap.sh argument 1 depends on the variable $NAME"},
		{"bad flag in the script", []string{"--user-data", write("f.sh", "#!/bin/bash\n/etc/eks/bootstrap.sh c --no-such-flag\n"), "--instance-type", "m5.large"}, 1,
			"eksboot render: error: user data: part 1 (text/x-shellscript) line 2: bootstrap.sh: unknown flag: --no-such-flag"},
		{"bad value in the script", []string{"--user-data", write("v.sh", "#!/bin/bash\n/etc/eks/bootstrap.sh c --b64-cluster-ca aGVsbG8= --apiserver-endpoint https://x\n"), "--instance-type", "m5.large"}, 1,
			"--b64-cluster-ca"},
		{"bad NodeConfig value", []string{"--user-data", write("b.yaml", "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: {cluster: {name: c, apiServerEndpoint: 'http://x', certificateAuthority: aGVsbG8=, cidr: 10.100.0.0/16}}\n"), "--instance-type", "m5.large"}, 1,
			`eksboot render: error: user data: merged NodeConfig: spec.cluster.certificateAuthority: `},
		{"nothing to render", []string{"--user-data", write("n.sh", "#!/bin/bash\necho hi\n"), "--instance-type", "m5.large"}, 1,
			"no NodeConfig part and no /etc/eks/bootstrap.sh command line in the user data (part 1 (text/x-shellscript);"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(append([]string{"eksboot", "render"}, tc.args...), &stdout, &stderr)
			out := stdout.String()
			if tc.code != 0 {
				out = stderr.String()
			}
			if code != tc.code || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, want %d with %q in\n%s", code, tc.code, tc.want, out)
			}
		})
	}
}
