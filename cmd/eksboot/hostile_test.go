package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/internal/testtools"
)

// TestHostileInputLeavesTheNodeAlone runs the binary with hostile or broken values on a
// node that is already configured: each must end with exit status 2 and one last line
// naming the flag, and every file must stay as it was.
func TestHostileInputLeavesTheNodeAlone(t *testing.T) {
	seed := t.TempDir()
	env, args := startCase(t, "01-m5large-usw2-vpc192", seed)
	if code, _, stderr := run(t, env, "", args...); code != 0 {
		t.Fatalf("setting up the node: exit %d\n%s", code, stderr)
	}
	// A symlink inside the root that points out of it, for the file flags.
	if err := os.Symlink("../../../../../../etc", filepath.Join(seed, "etc/escape")); err != nil {
		t.Fatal(err)
	}
	before := tree(t, seed)
	long := strings.Repeat("a", 70*1024)
	tests := []struct {
		name  string
		extra []string
		want  string
	}{
		{"newline in extra args", []string{"--kubelet-extra-args", "--v=2\n[Service]\nExecStartPre=/bin/evil"}, "--kubelet-extra-args"},
		{"carriage return in extra args", []string{"--kubelet-extra-args", "--v=2\r"}, "--kubelet-extra-args"},
		{"escape character in extra args", []string{"--kubelet-extra-args", "--v=2 \x1b[31m"}, "--kubelet-extra-args"},
		{"very long extra args", []string{"--kubelet-extra-args", "--node-labels=" + long}, "--kubelet-extra-args"},
		{"very long cluster name", append([]string{strings.Repeat("c", 101)}, args[2:]...), "CLUSTER_NAME"},
		{"cluster name with a quote", append([]string{`demo"x`}, args[2:]...), "CLUSTER_NAME"},
		{"cluster name with a newline", append([]string{"demo\nx"}, args[2:]...), "CLUSTER_NAME"},
		{"cluster name path traversal", append([]string{"../../etc"}, args[2:]...), "CLUSTER_NAME"},
		{"CA not base64", []string{"--b64-cluster-ca", "%%%"}, "--b64-cluster-ca"},
		{"CA is plain text", []string{"--b64-cluster-ca", "aGVsbG8gd29ybGQ="}, "--b64-cluster-ca"},
		{"CA is a private key", []string{"--b64-cluster-ca", "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUIKLS0tLS1FTkQgUFJJVkFURSBLRVktLS0tLQo="}, "--b64-cluster-ca"},
		{"CA empty after decoding", []string{"--b64-cluster-ca", "IA=="}, "--b64-cluster-ca"},
		{"endpoint http", []string{"--apiserver-endpoint", "http://x.example.com"}, "--apiserver-endpoint"},
		{"endpoint not a URL", []string{"--apiserver-endpoint", "not a url"}, "--apiserver-endpoint"},
		{"endpoint with a quote", []string{"--apiserver-endpoint", `https://x.example.com"`}, "--apiserver-endpoint"},
		{"endpoint with a newline", []string{"--apiserver-endpoint", "https://x.example.com\nserver: https://evil"}, "--apiserver-endpoint"},
		{"endpoint with a path", []string{"--apiserver-endpoint", "https://x.example.com/../../"}, "--apiserver-endpoint"},
		{"endpoint with user info", []string{"--apiserver-endpoint", "https://user:pw@x.example.com"}, "--apiserver-endpoint"},
		{"endpoint with a very long host", []string{"--apiserver-endpoint", "https://" + strings.Repeat("a", 300) + ".com"}, "--apiserver-endpoint"},
		{"DNS IP not an IP", []string{"--dns-cluster-ip", "10.0.0.256"}, "--dns-cluster-ip"},
		{"DNS IP with a space", []string{"--dns-cluster-ip", "10.0.0.10, 10.0.0.11"}, "--dns-cluster-ip"},
		{"DNS IP with a zone", []string{"--dns-cluster-ip", "fe80::1%eth0"}, "--dns-cluster-ip"},
		{"DNS IP hostname", []string{"--dns-cluster-ip", "kube-dns.local"}, "--dns-cluster-ip"},
		{"service IPv4 CIDR bogus", []string{"--service-ipv4-cidr", "10.100.0.0/40"}, "--service-ipv4-cidr"},
		{"service IPv4 CIDR is IPv6", []string{"--service-ipv4-cidr", "fd00::/108"}, "--service-ipv4-cidr"},
		{"service IPv6 CIDR bogus", []string{"--service-ipv6-cidr", "fd00::zz/108"}, "--service-ipv6-cidr"},
		{"IP family", []string{"--ip-family", "ipv4;rm -rf /"}, "--ip-family"},
		{"pause version with a specifier", []string{"--pause-container-version", "%n"}, "--pause-container-version"},
		{"pause version with a space", []string{"--pause-container-version", "3.5 --v=9"}, "--pause-container-version"},
		{"pause account", []string{"--pause-container-account", "12345678901x"}, "--pause-container-account"},
		{"pause image from the environment", nil, "PAUSE_CONTAINER_IMAGE"},
		{"containerd config path with a newline", []string{"--containerd-config-file", "/etc/eks/containerd/containerd-config.toml\n"}, "--containerd-config-file"},
		{"true/false flag with a newline", []string{"--use-max-pods", "false\nx"}, "--use-max-pods"},
		{"cluster ID with an escape", []string{"--cluster-id", "id\x1b[2J"}, "--cluster-id"},
		{"containerd config relative", []string{"--containerd-config-file", "../../etc/shadow"}, "--containerd-config-file"},
		{"containerd config traversal", []string{"--containerd-config-file", "/../../../etc/shadow-not-there"}, "--containerd-config-file"},
		{"containerd config through a symlink out of the root", []string{"--containerd-config-file", "/etc/escape/hostname"}, "--containerd-config-file"},
		{"retry attempts", []string{"--aws-api-retry-attempts", "1e9"}, "--aws-api-retry-attempts"},
		{"local disks", []string{"--local-disks", "raid0;reboot"}, "--local-disks"},
		{"runtime", []string{"--container-runtime", "docker"}, "--container-runtime"},
		{"IMDS endpoint", []string{"--imds-endpoint", "file:///etc/passwd"}, "--imds-endpoint"},
		{"grace periods", []string{"--shutdown-grace-period", "10s", "--shutdown-grace-period-critical-pods", "1m"}, "--shutdown-grace-period-critical-pods"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			caseEnv := map[string]string{}
			for k, v := range env {
				caseEnv[k] = v
			}
			a := append([]string{}, args...)
			if strings.HasPrefix(tc.name, "cluster name") || strings.HasPrefix(tc.name, "very long cluster") {
				a = append([]string{"bootstrap"}, tc.extra...)
			} else {
				a = append(a, tc.extra...)
			}
			if tc.want == "PAUSE_CONTAINER_IMAGE" {
				caseEnv["PAUSE_CONTAINER_IMAGE"] = "evil.example.com/pause:latest\nx"
			}
			code, stdout, stderr := run(t, caseEnv, "", a...)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			last := lines[len(lines)-1]
			if code != 2 || !strings.Contains(last, tc.want) || strings.Contains(stderr, "\tERROR\t") {
				t.Errorf("exit %d, last line %q (stdout %q); want exit 2 and a line naming %s", code, last, stdout, tc.want)
			}
			if strings.Contains(stderr+stdout, "BEGIN CERTIFICATE") || strings.Contains(stderr+stdout, "MIIDCzCCAfOgAwIBAgIU") {
				t.Error("the output shows the CA")
			}
			testtools.CompareTrees(t, tree(t, seed), before)
		})
	}
	if len(tests) < 30 {
		t.Errorf("only %d hostile inputs", len(tests))
	}
}
