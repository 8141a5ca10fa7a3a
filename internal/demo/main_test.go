package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/internal/testtools"
)

// eksboot is the static binary built from cmd/eksboot for these tests.
var eksboot string

func TestMain(m *testing.M) { testtools.MainWithEksboot(m, "../../cmd/eksboot", &eksboot) }

// TestDemo runs the demo on the real binary: it must configure the simulated node end
// to end and print the files, all on 127.0.0.1, without printing the CA.
func TestDemo(t *testing.T) {
	for _, tc := range []struct {
		profile string
		want    []string
	}{
		{"al2023", []string{"image profile: al2023", "--runtime-cgroups=/runtime.slice/containerd.service", "==> /etc/eks/image-credential-provider/config.json", "sandbox = 'localhost/kubernetes/pause:latest'", "command: aws"}},
		{"al2", []string{"image profile: al2", "--pod-infra-container-image=602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/pause:3.5", "command: /usr/bin/aws-iam-authenticator"}},
	} {
		var stdout, stderr bytes.Buffer
		if code := run([]string{"--binary", eksboot, "--image-profile", tc.profile}, &stdout, &stderr); code != 0 {
			t.Fatalf("%s: exit %d\n%s", tc.profile, code, stderr.String())
		}
		for _, want := range append([]string{
			"==> /etc/kubernetes/kubelet/kubelet-config.json (0644",
			`"maxPods": 29`,
			"==> /etc/systemd/system/kubelet.service.d/10-kubelet-args.conf",
			"--hostname-override=ip-192-168-45-67.us-west-2.compute.internal",
			"(the cluster CA: not printed)",
			"IMDS requests, 0 EC2 calls",
		}, tc.want...) {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("%s: demo output lacks %q:\n%s", tc.profile, want, stdout.String())
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

// TestUsage: --help is help (exit 0), bad arguments are one line and exit 2.
func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string
		err  string
	}{
		{"help", []string{"--help"}, 0, "--image-profile string", ""},
		{"argument", []string{"nope"}, 2, "", "unexpected arguments"},
		{"flag", []string{"--nope"}, 2, "", "unknown flag: --nope"},
		{"profile", []string{"--image-profile", "al1"}, 2, "", `--image-profile "al1": want al2 or al2023`},
		{"no binary", []string{"--binary", "/nonexistent/eksboot"}, 1, "", "--binary: stat /nonexistent/eksboot: no such file or directory (run make build first)"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String(), tc.out) || !strings.Contains(stderr.String(), tc.err) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d with %q / %q", tc.name, code, stdout.String(), stderr.String(), tc.code, tc.out, tc.err)
		}
		if tc.code == 2 && strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%s: want one line on stderr, got %q", tc.name, stderr.String())
		}
	}
}
