package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestMainCommands(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"version", []string{"eksboot", "version"}, 0, "eksboot dev\n", ""},
		{"no command", []string{"eksboot"}, 2, "", "Usage: eksboot COMMAND"},
		{"unknown command", []string{"eksboot", "join"}, 2, "", `unknown command "join"`},
		{"help", []string{"eksboot", "help"}, 0, "bootstrap [options] CLUSTER_NAME", ""},
		{"bootstrap help", []string{"eksboot", "bootstrap", "--help"}, 0, "--b64-cluster-ca", ""},
		{"bootstrap.sh name takes bootstrap.sh's command line", []string{"/etc/eks/bootstrap.sh", "-h"}, 0, "Usage: bootstrap.sh [options] CLUSTER_NAME", ""},
		{"bad flag", []string{"eksboot", "bootstrap", "--nope"}, 2, "", "eksboot bootstrap: unknown flag: --nope (see --help)\n"},
		{"bad value", []string{"bootstrap.sh", "c", "--ip-family", "ipv5", "--b64-cluster-ca", "eA==", "--apiserver-endpoint", "https://x.example.com", "--root", "/nonexistent-root"}, 2, "", `--ip-family "ipv5": want ipv4 or ipv6`},
		{"missing root", []string{"bootstrap.sh", "c", "--root", "/nonexistent-root"}, 2, "", "--root"},
		{"bad demo argument", []string{"eksboot", "demo", "nope"}, 2, "", "unexpected arguments"},
		{"bad demo flag", []string{"eksboot", "demo", "--nope"}, 2, "", "unknown flag: --nope"},
		{"bad demo profile", []string{"eksboot", "demo", "--image-profile", "al1"}, 2, "", `--image-profile "al1": want al2 or al2023`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(tc.args, &stdout, &stderr)
			if code != tc.wantCode || !strings.Contains(stdout.String(), tc.wantStdout) || !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("Main(%q) = %d\nstdout %q\nstderr %q\nwant %d, stdout containing %q, stderr containing %q",
					tc.args, code, stdout.String(), stderr.String(), tc.wantCode, tc.wantStdout, tc.wantStderr)
			}
		})
	}
}

func TestJSONLogs(t *testing.T) {
	var b bytes.Buffer
	log, err := newLogger("json", &b)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("step done")
	var v map[string]any
	if err := json.Unmarshal(b.Bytes(), &v); err != nil || v["msg"] != "step done" || v["level"] != "info" || v["ts"] == nil {
		t.Errorf("json log line %q: %v", b.String(), err)
	}
	b.Reset()
	log, _ = newLogger("console", &b)
	log.Info("step done")
	if strings.HasPrefix(b.String(), "20") || !strings.HasPrefix(b.String(), "INFO\t") {
		t.Errorf("console line %q: want no timestamp (journald adds it)", b.String())
	}
}

// TestDemo runs `eksboot demo`: it must configure the simulated node end to end and
// print the files, all on 127.0.0.1.
func TestDemo(t *testing.T) {
	for _, k := range []string{"AWS_ENDPOINT_URL_EC2", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_EC2_METADATA_DISABLED"} {
		t.Setenv(k, "") // restored after the test; the demo sets its own
	}
	for _, tc := range []struct {
		profile string
		want    []string
	}{
		{"al2023", []string{"image profile: al2023", "--runtime-cgroups=/runtime.slice/containerd.service", "==> /etc/eks/image-credential-provider/config.json", "sandbox = 'localhost/kubernetes/pause:latest'", "command: aws"}},
		{"al2", []string{"image profile: al2", "--pod-infra-container-image=602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/pause:3.5", "command: /usr/bin/aws-iam-authenticator"}},
	} {
		var stdout, stderr bytes.Buffer
		if code := Main([]string{"eksboot", "demo", "--image-profile", tc.profile}, &stdout, &stderr); code != 0 {
			t.Fatalf("%s: exit %d\n%s", tc.profile, code, stderr.String())
		}
		for _, want := range append([]string{
			"==> /etc/kubernetes/kubelet/kubelet-config.json (0644",
			`"maxPods": 29`,
			"==> /etc/systemd/system/kubelet.service.d/10-kubelet-args.conf",
			"--hostname-override=ip-192-168-45-67.us-west-2.compute.internal",
			"(the cluster CA: not printed)",
		}, tc.want...) {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("%s: demo output lacks %q", tc.profile, want)
			}
		}
		if strings.Contains(stdout.String(), "==> /etc/os-release") {
			t.Errorf("%s: the demo printed the simulated image's own files", tc.profile)
		}
		if !strings.Contains(stderr.String(), `"step": "write"`) || !strings.Contains(stderr.String(), `"imageProfile": "`+tc.profile+`"`) ||
			strings.Contains(stdout.String()+stderr.String(), "BEGIN CERTIFICATE") {
			t.Errorf("%s: demo log:\n%s", tc.profile, stderr.String())
		}
	}
}
