package bootstrap

import (
	"encoding/base64"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/internal/testtools"
)

// testCA returns a self-signed CA certificate in PEM.
func testCA(t testing.TB) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: testtools.SelfSignedCA(t)})
}

// validArgs is a minimal valid command line; extra flags are appended.
func validArgs(t testing.TB, extra ...string) []string {
	return append([]string{
		"my-cluster",
		"--b64-cluster-ca", base64.StdEncoding.EncodeToString(testCA(t)),
		"--apiserver-endpoint", "https://ABCDEF.gr7.us-west-2.eks.amazonaws.com",
	}, extra...)
}

func TestValidateDefaults(t *testing.T) {
	o, err := parseArgs(validArgs(t), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Validate(o)
	if err != nil {
		t.Fatal(err)
	}
	if !c.UseMaxPods || !c.MountBPFFS || c.IPFamily != "ipv4" || c.PauseContainerVersion != "3.5" || c.APIRetryAttempts != 3 || c.DNSClusterIPs != nil {
		t.Errorf("defaults: %+v", c)
	}
	if !strings.HasPrefix(string(c.CA), "-----BEGIN CERTIFICATE-----") {
		t.Errorf("CA not decoded: %q", c.CA)
	}
}

func TestValidateValues(t *testing.T) {
	tests := []struct {
		name  string
		extra []string
		check func(c *Config) bool
	}{
		{"ipv6 implied by service ipv6 cidr", []string{"--service-ipv6-cidr", "fd00:10:96::/112"}, func(c *Config) bool { return c.IPFamily == "ipv6" }},
		{"ip family is case-insensitive", []string{"--ip-family", "IPv6", "--dns-cluster-ip", "fd00::a"}, func(c *Config) bool { return c.IPFamily == "ipv6" }},
		{"dns list", []string{"--dns-cluster-ip", "10.100.0.10,10.100.0.11"}, func(c *Config) bool { return len(c.DNSClusterIPs) == 2 }},
		{"reserved cpus detected", []string{"--kubelet-extra-args", "--reserved-cpus=0-1"}, func(c *Config) bool { return c.ReservedCPUs }},
		{"docker flags only warn", []string{"--enable-docker-bridge", "true", "--docker-config-json", "{}"}, func(c *Config) bool { return len(c.Warnings) == 2 }},
		{"use-max-pods TRUE is false, as in bootstrap.sh, with a warning", []string{"--use-max-pods", "TRUE"}, func(c *Config) bool { return !c.UseMaxPods && len(c.Warnings) == 1 }},
		{"docker bridge value is never run", []string{"--enable-docker-bridge", "yes"}, func(c *Config) bool { return len(c.Warnings) == 1 }},
		{"mount-bpf-fs false", []string{"--mount-bpf-fs", "false"}, func(c *Config) bool { return !c.MountBPFFS && len(c.Warnings) == 0 }},
		{"endpoint with port", []string{"--apiserver-endpoint", "https://10.0.0.1:6443"}, func(c *Config) bool { return c.APIServerEndpoint == "https://10.0.0.1:6443" }},
		{"extra args keep quotes, %, $ and tabs", []string{"--kubelet-extra-args", "--a='x y' --b=\"%n\" --c=$HOME\t--d=\\"}, func(c *Config) bool { return c.KubeletExtraArgs == "--a='x y' --b=\"%n\" --c=$HOME\t--d=\\" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseArgs(validArgs(t, tc.extra...), noEnv)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Validate(o)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(c) {
				t.Errorf("%+v", c)
			}
		})
	}
}

// TestValidateRejects checks that each bad value is a UsageError that names its flag.
func TestValidateRejects(t *testing.T) {
	notPEM := base64.StdEncoding.EncodeToString([]byte("hello world"))
	keyPEM := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: []byte{1}}))
	badCert := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("junk")}))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no cluster name", validArgs(t)[1:], "CLUSTER_NAME is missing"},
		{"cluster name with a slash", append([]string{"../etc"}, validArgs(t)[1:]...), "CLUSTER_NAME"},
		{"no CA, no discovery deadline", []string{"c", "--apiserver-endpoint", "https://x.example.com", "--discovery-timeout", "0s"}, "--discovery-timeout 0s: want a positive duration"},
		{"CA not base64", validArgs(t, "--b64-cluster-ca", "!!not base64!!"), "--b64-cluster-ca: not valid base64"},
		{"CA not PEM", validArgs(t, "--b64-cluster-ca", notPEM), "--b64-cluster-ca: does not decode to a PEM certificate"},
		{"CA is a key", validArgs(t, "--b64-cluster-ca", keyPEM), "--b64-cluster-ca: decodes to a PEM \"RSA PRIVATE KEY\" block"},
		{"CA not X.509", validArgs(t, "--b64-cluster-ca", badCert), "not a valid X.509 certificate"},
		{"endpoint http", validArgs(t, "--apiserver-endpoint", "http://x.example.com"), "--apiserver-endpoint \"http://x.example.com\": the scheme is not https"},
		{"endpoint not a URL", validArgs(t, "--apiserver-endpoint", "not a url"), "--apiserver-endpoint"},
		{"endpoint with two hosts", validArgs(t, "--apiserver-endpoint", "https://a.example.com,b.example.com"), "is not a DNS host name"},
		{"endpoint with query", validArgs(t, "--apiserver-endpoint", "https://x.example.com/?a=1&b=2"), "only scheme, host and port"},
		{"endpoint with user", validArgs(t, "--apiserver-endpoint", "https://u:p@x.example.com"), "user info"},
		{"endpoint bad port", validArgs(t, "--apiserver-endpoint", "https://x.example.com:99999"), "port"},
		{"dns ip not an ip", validArgs(t, "--dns-cluster-ip", "10.0.0.300"), "--dns-cluster-ip"},
		{"dns ip list with empty item", validArgs(t, "--dns-cluster-ip", "10.0.0.10,"), "--dns-cluster-ip"},
		{"ip family ipv5", validArgs(t, "--ip-family", "ipv5"), "--ip-family \"ipv5\": want ipv4 or ipv6"},
		{"ipv6 cidr with ipv4 family", validArgs(t, "--ip-family", "ipv4", "--service-ipv6-cidr", "fd00::/108"), "--service-ipv6-cidr with --ip-family ipv4"},
		{"ipv6 without cidr or dns", validArgs(t, "--ip-family", "ipv6"), "--ip-family ipv6 needs --service-ipv6-cidr or --dns-cluster-ip"},
		{"bad ipv6 cidr", validArgs(t, "--service-ipv6-cidr", "10.0.0.0/16"), "--service-ipv6-cidr"},
		{"bad ipv4 cidr", validArgs(t, "--service-ipv4-cidr", "10.0.0.0/33"), "--service-ipv4-cidr"},
		{"dockerd", validArgs(t, "--container-runtime", "dockerd"), "containerd is the only supported container runtime"},
		{"unknown runtime", validArgs(t, "--container-runtime", "crio"), "--container-runtime"},
		{"retry attempts", validArgs(t, "--aws-api-retry-attempts", "-1"), "--aws-api-retry-attempts"},
		{"pause account", validArgs(t, "--pause-container-account", "12345"), "--pause-container-account"},
		{"pause version", validArgs(t, "--pause-container-version", "3.5 --v=9"), "--pause-container-version"},
		{"relative containerd config", validArgs(t, "--containerd-config-file", "my.toml"), "--containerd-config-file"},
		{"local disks", validArgs(t, "--local-disks", "raid5"), "--local-disks"},
		{"newline in extra args", validArgs(t, "--kubelet-extra-args", "--a=1\nExecStart=/bin/evil"), "--kubelet-extra-args: a line break"},
		{"NUL in extra args", validArgs(t, "--kubelet-extra-args", "--a=\x00"), "--kubelet-extra-args: control character"},
		{"outposts", validArgs(t, "--enable-local-outpost", "true"), "--enable-local-outpost true"},
		{"newline in the containerd config path", validArgs(t, "--containerd-config-file", "/etc/a\n.toml"), "--containerd-config-file: control character U+000A at byte 6 is not allowed"},
		{"newline in a true/false flag", validArgs(t, "--use-max-pods", "true\n"), "--use-max-pods: control character U+000A at byte 4 is not allowed"},
		{"escape in a true/false flag", validArgs(t, "--mount-bpf-fs", "\x1b[2Jfalse"), "--mount-bpf-fs: control character U+001B at byte 0 is not allowed"},
		{"newline in the cluster ID", validArgs(t, "--cluster-id", "a\nb"), "--cluster-id: control character U+000A at byte 1 is not allowed"},
		{"kubelet version", validArgs(t, "--kubelet-version", "latest"), "--kubelet-version"},
		{"log format", validArgs(t, "--log-format", "xml"), "--log-format"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseArgs(tc.args, noEnv)
			if err == nil {
				_, err = Validate(o)
			}
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("error = %v, want a UsageError", err)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error = %q, want one line containing %q", err, tc.want)
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	o, err := parseArgs([]string{"--ip-family", "ipv5", "--dns-cluster-ip", "x", "--discovery-timeout", "0s"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Validate(o)
	for _, want := range []string{"CLUSTER_NAME", "--ip-family", "--dns-cluster-ip", "--discovery-timeout"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error = %v, want it to mention %s", err, want)
		}
	}
}

func TestGracefulShutdownFlags(t *testing.T) {
	tests := []struct {
		name           string
		extra          []string
		total, crit    time.Duration
		wantErrContain string
	}{
		{name: "off by default (bootstrap.sh)"},
		{name: "on with defaults", extra: []string{"--graceful-shutdown"}, total: 150 * time.Second, crit: 30 * time.Second},
		{name: "on with a period", extra: []string{"--graceful-shutdown", "--shutdown-grace-period", "60s"}, total: time.Minute, crit: 30 * time.Second},
		{name: "a period alone turns it on", extra: []string{"--shutdown-grace-period=45s"}, total: 45 * time.Second},
		{name: "both periods", extra: []string{"--shutdown-grace-period", "2m", "--shutdown-grace-period-critical-pods", "20s"}, total: 2 * time.Minute, crit: 20 * time.Second},
		{name: "critical longer than total", extra: []string{"--shutdown-grace-period", "20s", "--shutdown-grace-period-critical-pods", "30s"}, wantErrContain: "is longer than --shutdown-grace-period"},
		{name: "defaults with a short total", extra: []string{"--graceful-shutdown", "--shutdown-grace-period", "20s"}, wantErrContain: "--shutdown-grace-period-critical-pods 30s is longer"},
		{name: "fractional seconds", extra: []string{"--shutdown-grace-period", "1500ms"}, wantErrContain: "want whole seconds"},
		{name: "too long", extra: []string{"--shutdown-grace-period", "2h"}, wantErrContain: "from 1s to 1h"},
		{name: "negative", extra: []string{"--shutdown-grace-period", "-5s"}, wantErrContain: "from 1s to 1h"},
		{name: "critical alone", extra: []string{"--shutdown-grace-period-critical-pods", "10s"}, wantErrContain: "needs --shutdown-grace-period or --graceful-shutdown"},
		{name: "off but periods", extra: []string{"--graceful-shutdown=false", "--shutdown-grace-period", "10s"}, wantErrContain: "--graceful-shutdown=false"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseArgs(validArgs(t, tc.extra...), noEnv)
			must(t, err)
			c, err := Validate(o)
			if tc.wantErrContain != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrContain) {
					t.Fatalf("err = %v, want %q", err, tc.wantErrContain)
				}
				return
			}
			must(t, err)
			if c.ShutdownGracePeriod != tc.total || c.ShutdownGracePeriodCriticalPods != tc.crit {
				t.Errorf("periods %v/%v, want %v/%v", c.ShutdownGracePeriod, c.ShutdownGracePeriodCriticalPods, tc.total, tc.crit)
			}
		})
	}
}
