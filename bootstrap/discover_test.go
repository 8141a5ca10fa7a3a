package bootstrap

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/eksboot/eksboot/eksapi"
	"github.com/eksboot/eksboot/eksapi/eksapitest"
	"github.com/eksboot/eksboot/internal/goldencase"
	"github.com/eksboot/eksboot/rootfs"
)

// fastDiscovery is eksapi's policy scaled down to milliseconds.
var fastDiscovery = eksapi.Policy{Base: time.Millisecond, Max: 8 * time.Millisecond, Poll: 2 * time.Millisecond}

// discoveryCase is golden case name run with only the cluster name (and the flags
// not in drop), and the fake EKS cluster that holds the CA and endpoint it was given.
func discoveryCase(t *testing.T, name string, drop ...string) (goldencase.Case, eksapitest.Cluster) {
	t.Helper()
	c, err := goldencase.Load(filepath.Join(goldenDir, name))
	must(t, err)
	cl := eksapitest.Cluster{Name: c.Args[0], ServiceIPv4CIDR: "10.100.0.0/16", IPFamily: "ipv4"}
	var args []string
	for i := 0; i < len(c.Args); i++ {
		switch a := c.Args[i]; {
		case a == "--b64-cluster-ca":
			i++
			cl.CAData = c.Args[i]
		case a == "--apiserver-endpoint":
			i++
			cl.Endpoint = c.Args[i]
		case slices.Contains(drop, a):
			i++
		default:
			args = append(args, a)
		}
	}
	c.Args = args
	return c, cl
}

// runIn runs eksboot in-process on case c into dir (which may hold an earlier run),
// with the fake EKS, and returns the logs.
func runIn(t *testing.T, c goldencase.Case, dir string, eks *eksapitest.Server, extra ...string) (*observer.ObservedLogs, error) {
	t.Helper()
	return runInWith(t, c, dir, eks, nil, extra...)
}

// runInWith is runIn with a hook that may change the fakes (and the environment)
// before the run.
func runInWith(t *testing.T, c goldencase.Case, dir string, eks *eksapitest.Server, prep func(*goldencase.Fakes), extra ...string) (*observer.ObservedLogs, error) {
	t.Helper()
	return runInEnv(t, c, dir, eks, prep, nil, extra...)
}

// runInEnv is runInWith with a hook that may change the run's environment.
func runInEnv(t *testing.T, c goldencase.Case, dir string, eks *eksapitest.Server, prep func(*goldencase.Fakes), hook func(*Env), extra ...string) (*observer.ObservedLogs, error) {
	t.Helper()
	fakes := c.StartFor(t)
	if prep != nil {
		prep(fakes)
	}
	t.Setenv("AWS_ENDPOINT_URL_EKS", eks.URL())
	must(t, c.WriteFiles(dir))
	root, err := rootfs.New(dir)
	must(t, err)
	args := append(slices.Clone(c.Args), "--root", dir, "--no-restart",
		"--kubelet-version", c.KubeletVersion, "--imds-endpoint", fakes.IMDS.URL())
	o, err := parseArgs(append(args, extra...), func(k string) string { return c.Env[k] })
	if err != nil {
		return nil, err
	}
	core, logs := observer.New(zap.DebugLevel)
	env := DefaultEnv(root, zap.New(core), &bytes.Buffer{}, &bytes.Buffer{})
	env.CPUs = c.CPUs
	env.Getenv = func(k string) string { return c.Env[k] }
	env.DNSNameAttempts, env.DNSNameInterval = 1, 0
	env.Discovery = fastDiscovery
	if hook != nil {
		hook(env)
	}
	return logs, runOptions(t, context.Background(), o, env)
}

func newEKS(t *testing.T, clusters ...eksapitest.Cluster) *eksapitest.Server {
	t.Helper()
	s, err := eksapitest.NewServer()
	must(t, err)
	t.Cleanup(func() { must(t, s.Close()) })
	for _, c := range clusters {
		s.AddCluster(c)
	}
	return s
}

// checkGolden compares the files of dir with golden case want's.
func checkGolden(t *testing.T, dir, want string) {
	t.Helper()
	for _, rel := range []string{
		"var/lib/kubelet/kubeconfig", "etc/kubernetes/pki/ca.crt",
		"etc/systemd/system/kubelet.service.d/10-kubelet-args.conf", "etc/containerd/config.toml",
	} {
		wantB, werr := os.ReadFile(filepath.Join(want, rel))
		gotB, gerr := os.ReadFile(filepath.Join(dir, rel))
		if werr != nil || gerr != nil || !bytes.Equal(gotB, wantB) {
			t.Errorf("%s differs from bootstrap.sh's:\n got (%v): %q\nwant (%v): %q", rel, gerr, gotB, werr, wantB)
		}
	}
	for _, d := range jsonDiff("", readJSON(t, filepath.Join(want, "etc/kubernetes/kubelet/kubelet-config.json")), kubeletConfig(t, dir)) {
		t.Errorf("kubelet-config.json: %s", d)
	}
}

// filesUnder lists the regular files under dir, as node paths.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	must(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			out = append(out, "/"+filepath.ToSlash(must1(filepath.Rel(dir, p))))
		}
		return err
	}))
	return out
}

func must1[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// checkNoSecretsLogged fails when a log entry shows the CA, decoded or not.
func checkNoSecretsLogged(t *testing.T, logs *observer.ObservedLogs, b64CA string) {
	t.Helper()
	for _, e := range logs.All() {
		s := fmt.Sprint(e.Message, e.ContextMap())
		if strings.Contains(s, "BEGIN CERTIFICATE") || strings.Contains(s, b64CA[:40]) {
			t.Errorf("the log shows the CA: %v", e)
		}
	}
}

func TestDiscovery(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(s *eksapitest.Server, cl *eksapitest.Cluster)
		extra   []string
		calls   int
		wantErr []string // nil: the node is configured as golden case 01
	}{
		{name: "active", calls: 1},
		{name: "creating then active", calls: 3, setup: func(_ *eksapitest.Server, cl *eksapitest.Cluster) {
			cl.Statuses = []string{"CREATING", "CREATING", "ACTIVE"}
		}},
		{name: "throttled 3 times then answered", calls: 4, setup: func(s *eksapitest.Server, _ *eksapitest.Cluster) { s.Throttle(3) }},
		{
			name: "throttled past --aws-api-retry-attempts", calls: 2, extra: []string{"--aws-api-retry-attempts", "1"},
			setup:   func(s *eksapitest.Server, _ *eksapitest.Cluster) { s.Throttle(5) },
			wantErr: []string{`cluster discovery for "demo" in us-west-2: ThrottlingException: more failures in a row than --aws-api-retry-attempts 1 allows`, "2 calls"},
		},
		{
			name: "not found", calls: 1, setup: func(_ *eksapitest.Server, cl *eksapitest.Cluster) { cl.Name = "other" },
			wantErr: []string{`cluster discovery for "demo" in us-west-2: ResourceNotFoundException: there is no cluster of that name`, "No cluster found for name: demo."},
		},
		{
			name: "access denied", calls: 1,
			setup: func(s *eksapitest.Server, _ *eksapitest.Cluster) {
				s.SetError(403, "AccessDeniedException", "User: arn:aws:sts::111122223333:assumed-role/node/i-1 is not authorized to perform: eks:DescribeCluster")
			},
			wantErr: []string{`cluster discovery for "demo" in us-west-2: AccessDeniedException: the node's IAM role lacks the eks:DescribeCluster permission`},
		},
		{
			name: "hung server vs deadline", calls: 1, extra: []string{"--discovery-timeout", "300ms"},
			setup:   func(s *eksapitest.Server, _ *eksapitest.Cluster) { s.SetHang(true) },
			wantErr: []string{`cluster discovery for "demo" in us-west-2: --discovery-timeout 300ms ran out`, "no answer with an ACTIVE cluster before the deadline"},
		},
		{
			name: "deleting", calls: 1, setup: func(_ *eksapitest.Server, cl *eksapitest.Cluster) { cl.Statuses = []string{"DELETING"} },
			wantErr: []string{"the cluster is DELETING", "nodes can only join an ACTIVE cluster"},
		},
		{name: "outposts", calls: 1, setup: func(_ *eksapitest.Server, cl *eksapitest.Cluster) {
			cl.OutpostARN = "arn:aws:outposts:us-west-2:111122223333:outpost/op-0123"
		}, wantErr: []string{`cluster "demo" in us-west-2 (from eks:DescribeCluster): a local cluster on AWS Outposts needs its ID, and the answer has none: pass --cluster-id`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, cl := discoveryCase(t, "01-m5large-usw2-vpc192")
			eks := newEKS(t)
			if tc.setup != nil {
				tc.setup(eks, &cl)
			}
			eks.AddCluster(cl)
			dir := t.TempDir()
			logs, err := runIn(t, c, dir, eks, tc.extra...)
			if got := eks.Calls(); got != tc.calls {
				t.Errorf("%d DescribeCluster calls, want %d", got, tc.calls)
			}
			checkNoSecretsLogged(t, logs, cl.CAData)
			if tc.wantErr == nil {
				must(t, err)
				checkGolden(t, dir, filepath.Join(goldenDir, "01-m5large-usw2-vpc192"))
				st, err := os.Stat(filepath.Join(dir, "var/lib/eksboot/clusters/us-west-2/demo.json"))
				if err != nil || st.Mode().Perm() != 0o600 {
					t.Errorf("cluster cache: %v, mode %v; want mode 0600", err, st.Mode())
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is more than one line: %q", err)
			}
			if got := filesUnder(t, dir); len(got) != len(c.Files) {
				t.Errorf("wrote files after a failed discovery: %v", got)
			}
		})
	}
}

// TestDiscoveryFillsNetworkSettings checks the values bootstrap.sh took from
// DescribeCluster: the IPv6 family and CIDR, and a service CIDR that replaces the flag.
func TestDiscoveryFillsNetworkSettings(t *testing.T) {
	t.Run("ipv6 cluster: family and CIDR from the cluster", func(t *testing.T) {
		c, cl := discoveryCase(t, "10-ipv6", "--ip-family", "--service-ipv6-cidr")
		cl.IPFamily, cl.ServiceIPv4CIDR, cl.ServiceIPv6CIDR = "ipv6", "", "fd00:10:96::/112"
		dir := t.TempDir()
		_, err := runIn(t, c, dir, newEKS(t, cl))
		must(t, err)
		checkGolden(t, dir, filepath.Join(goldenDir, "10-ipv6"))
	})
	t.Run("the cluster's service CIDR replaces --service-ipv4-cidr", func(t *testing.T) {
		c, cl := discoveryCase(t, "15-service-ipv4-cidr")
		dir := t.TempDir()
		logs, err := runIn(t, c, dir, newEKS(t, cl))
		must(t, err)
		if dns := kubeletConfig(t, dir)["clusterDNS"]; fmt.Sprint(dns) != "[10.100.0.10]" {
			t.Errorf("clusterDNS %v, want the cluster's 10.100.0.10", dns)
		}
		if w := warnings(logs); !strings.Contains(w, "--service-ipv4-cidr 10.96.0.0/12 is replaced by the cluster's service CIDR (10.100.0.0/16)") {
			t.Errorf("no warning about the replaced flag: %q", w)
		}
	})
}

func TestDiscoveryCache(t *testing.T) {
	const cachePath = "var/lib/eksboot/clusters/us-west-2/demo.json"
	tests := []struct {
		name      string
		edit      func(t *testing.T, dir string) // between the two runs
		extra     []string                       // flags of the second run
		wantCalls int                            // in the second run
	}{
		{name: "reboot: the cache answers", wantCalls: 0},
		{name: "the same endpoint given: the cache answers", extra: []string{"--apiserver-endpoint", "https://0123456789ABCDEF0123456789ABCDEF.gr7.us-west-2.eks.amazonaws.com"}, wantCalls: 0},
		{name: "another endpoint given: ignored", extra: []string{"--apiserver-endpoint", "https://other.example.com"}, wantCalls: 1},
		{name: "another CA given: ignored", extra: []string{"--b64-cluster-ca", base64CA(t)}, wantCalls: 1},
		{name: "corrupt: ignored", wantCalls: 1, edit: func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, cachePath), []byte("{"), 0o600))
		}},
		{name: "for another cluster: ignored", wantCalls: 1, edit: func(t *testing.T, dir string) {
			p := filepath.Join(dir, cachePath)
			b, err := os.ReadFile(p)
			must(t, err)
			must(t, os.WriteFile(p, bytes.Replace(b, []byte(`"name": "demo"`), []byte(`"name": "other"`), 1), 0o600))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, cl := discoveryCase(t, "01-m5large-usw2-vpc192")
			eks := newEKS(t, cl)
			dir := t.TempDir()
			_, err := runIn(t, c, dir, eks)
			must(t, err)
			first := eks.Calls()
			if tc.edit != nil {
				tc.edit(t, dir)
			}
			logs, err := runIn(t, c, dir, eks, tc.extra...)
			must(t, err)
			if got := eks.Calls() - first; got != tc.wantCalls {
				t.Errorf("second run: %d DescribeCluster calls, want %d", got, tc.wantCalls)
			}
			if tc.wantCalls == 0 {
				if logs.FilterMessage("every file already up to date").Len() != 1 {
					t.Errorf("the second run changed files")
				}
			}
			checkGolden(t, dir, filepath.Join(goldenDir, "01-m5large-usw2-vpc192"))
		})
	}
}

func base64CA(t *testing.T) string {
	return base64.StdEncoding.EncodeToString(testCA(t))
}

func TestDryRunDiscoversButWritesNothing(t *testing.T) {
	c, cl := discoveryCase(t, "01-m5large-usw2-vpc192")
	eks := newEKS(t, cl)
	dir := t.TempDir()
	_, err := runIn(t, c, dir, eks, "--dry-run")
	must(t, err)
	if eks.Calls() != 1 || len(filesUnder(t, dir)) != len(c.Files) {
		t.Errorf("%d calls, files %v; want 1 call and nothing written", eks.Calls(), filesUnder(t, dir))
	}
}

func TestValidateLeavesAMissingCAOrEndpointToDiscovery(t *testing.T) {
	tests := [][]string{
		{"c"},
		{"c", "--apiserver-endpoint", "https://x.example.com"},
		{"c", "--b64-cluster-ca", base64CA(t)},
		{"c", "--ip-family", "ipv6"}, // the IPv6 service CIDR comes from the cluster
	}
	for _, args := range tests {
		o, err := parseArgs(args, noEnv)
		must(t, err)
		if _, err := Validate(o); err != nil {
			t.Errorf("%q: %v", args, err)
		}
	}
}

// TestClientsShareCredentials: a node that discovers its cluster and asks EC2 for its
// name reads its instance-profile credentials from IMDS once, for both clients.
func TestClientsShareCredentials(t *testing.T) {
	c, cl := discoveryCase(t, "01-m5large-usw2-vpc192")
	const credPath = "/latest/meta-data/iam/security-credentials/"
	var fakes *goldencase.Fakes
	_, err := runInWith(t, c, t.TempDir(), newEKS(t, cl), func(f *goldencase.Fakes) {
		fakes = f
		role := "eks-node-role"
		creds := `{"Code":"Success","Type":"AWS-HMAC","AccessKeyId":"ASIAROLE","SecretAccessKey":"s","Token":"t",` +
			`"Expiration":"` + time.Now().Add(6*time.Hour).UTC().Format(time.RFC3339) + `"}`
		f.IMDS.SetOverride(credPath, &role)
		f.IMDS.SetOverride(credPath+role, &creds)
		for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_EC2_METADATA_DISABLED"} {
			t.Setenv(k, "")
		}
	})
	must(t, err)
	n := 0
	for _, r := range fakes.IMDS.Requests() {
		if r.Method == "GET" && r.Path == credPath+"eks-node-role" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d reads of the role's credentials, want 1 for the EC2 and EKS clients together", n)
	}
}
