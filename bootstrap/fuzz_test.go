package bootstrap

import (
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/internal/goldencase"
)

// FuzzParseValidate feeds arbitrary command lines (NUL-separated arguments) to Parse
// and Validate: they must never panic, every error must be a UsageError, and an
// accepted configuration must hold only values that are safe to render. Most seeds
// carry a CA that is not a certificate: parsing a real one takes tens of milliseconds
// under the fuzzer's instrumentation (FuzzCA covers the CA); the seeds still run the
// accepting path with the real one in ordinary `go test` runs.
func FuzzParseValidate(f *testing.F) {
	ca := goldenCA(f)
	f.Add(strings.Join([]string{"demo", "--b64-cluster-ca", ca, "--apiserver-endpoint", "https://x.example.com", "--graceful-shutdown"}, "\x00"))
	ca = "eA=="
	for _, args := range [][]string{
		{"demo", "--b64-cluster-ca", ca, "--apiserver-endpoint", "https://x.example.com"},
		{"demo", "--b64-cluster-ca=" + ca, "--apiserver-endpoint=https://10.0.0.1:443", "--dns-cluster-ip", "10.100.0.10,10.100.0.11"},
		{"--ip-family", "ipv6", "--service-ipv6-cidr", "fd00::/108", "c", "--b64-cluster-ca", ca, "--apiserver-endpoint", "https://x"},
		{"--kubelet-extra-args", "--a='b c' %n $X", "--use-max-pods", "TRUE", "c"},
		{"--foo", "bar"},
		{"-h"},
		{"--shutdown-grace-period", "1m", "--graceful-shutdown"},
	} {
		f.Add(strings.Join(args, "\x00"))
	}
	f.Fuzz(func(t *testing.T, joined string) {
		o, err := parseArgs(strings.Split(joined, "\x00"), func(string) string { return "" })
		if err == nil && !o.Help {
			var c *Config
			c, err = Validate(o)
			if err == nil {
				checkConfig(t, c)
			}
		}
		if err != nil {
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("error %v is not a UsageError", err)
			}
		}
	})
}

// goldenCA returns the --b64-cluster-ca of golden case 01. (Fuzz targets do not
// generate a CA: key generation under the fuzzer's coverage instrumentation takes
// seconds in every worker.)
func goldenCA(f *testing.F) string {
	f.Helper()
	c, err := goldencase.Load(filepath.Join(goldenDir, "01-m5large-usw2-vpc192"))
	if err != nil {
		f.Fatal(err)
	}
	for i, a := range c.Args[:len(c.Args)-1] {
		if a == "--b64-cluster-ca" {
			return c.Args[i+1]
		}
	}
	f.Fatal("case 01 has no --b64-cluster-ca")
	return ""
}

// checkConfig asserts what an accepted configuration promises.
func checkConfig(t *testing.T, c *Config) {
	t.Helper()
	if err := checkArgs(c.KubeletExtraArgs); err != nil {
		t.Fatalf("accepted extra args %q: %v", c.KubeletExtraArgs, err)
	}
	if c.APIServerEndpoint != "" { // empty: looked up with eks:DescribeCluster
		u, err := url.Parse(c.APIServerEndpoint)
		if err != nil || u.Scheme != "https" || u.Host == "" || strings.ContainsAny(c.APIServerEndpoint, " \n\"'#?") {
			t.Fatalf("accepted endpoint %q", c.APIServerEndpoint)
		}
	}
	if !clusterNameRE.MatchString(c.ClusterName) { // the pattern isClusterName implements (names_test.go)
		t.Fatalf("accepted cluster %q", c.ClusterName)
	}
	if c.ShutdownGracePeriodCriticalPods > c.ShutdownGracePeriod {
		t.Fatalf("critical period %v > %v", c.ShutdownGracePeriodCriticalPods, c.ShutdownGracePeriod)
	}
}

// FuzzCA checks that decodeCA never panics and accepts only PEM certificate bundles.
func FuzzCA(f *testing.F) {
	f.Add(goldenCA(f))
	f.Add("aGVsbG8gd29ybGQ=")
	f.Add("LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=")
	f.Add("")
	f.Fuzz(func(t *testing.T, b64 string) {
		pem, err := decodeCA(b64)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error has a line break: %q", err)
			}
			return
		}
		if !strings.HasPrefix(strings.TrimLeft(string(pem), " \t\r\n"), "-----BEGIN CERTIFICATE-----") {
			t.Fatalf("accepted %q", pem)
		}
	})
}

// FuzzEndpoint checks that checkEndpoint accepts only https://host[:port][/] URLs
// whose host is a DNS name or an IP address.
func FuzzEndpoint(f *testing.F) {
	for _, s := range []string{"https://x.example.com", "https://10.0.0.1:6443", "https://[fd00::1]:443/", "http://x", "https://a,b", "https://x/?a=1&b=2", "https://x\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if checkEndpoint(s) != nil {
			return
		}
		u, err := url.Parse(s)
		if err != nil || u.Scheme != "https" || u.Hostname() == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			t.Fatalf("accepted %q", s)
		}
		for _, r := range s {
			if r <= ' ' || r == 0x7f || r == '"' || r == '\'' || r == '\\' || r == ',' {
				t.Fatalf("accepted %q with %q", s, r)
			}
		}
	})
}
