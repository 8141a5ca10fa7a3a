package bootstrap

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/internal/goldencase"
	"github.com/eksboot/eksboot/kubeletconf"
)

const (
	testOutpostARN = "arn:aws:outposts:us-west-2:111122223333:outpost/op-0123456789abcdef0"
	testClusterID  = "51eaebb5-7e52-4e71-baba-e98a6314b10e"
)

// localhostAddrs are the addresses this machine's resolver gives for localhost (its
// /etc/hosts): the fake local cluster's API server is https://localhost:6443, so the
// real resolver answers from loopback's own entries.
func localhostAddrs(t *testing.T) []string {
	t.Helper()
	addrs, err := net.DefaultResolver.LookupHost(context.Background(), "localhost")
	if err != nil || len(addrs) == 0 {
		t.Skipf("localhost does not resolve here (%v)", err)
	}
	return addrs
}

// TestDiscoveryFindsALocalCluster: eks:DescribeCluster (the fake EKS on loopback)
// answers with outpostConfig.outpostArns and an ID, so the node joins it as a local
// cluster: a bootstrap kubeconfig whose token names the ID, the client-certificate
// kubeconfig, --bootstrap-kubeconfig, and the API server's addresses in /etc/hosts,
// which a second run leaves as they are.
func TestDiscoveryFindsALocalCluster(t *testing.T) {
	addrs := localhostAddrs(t)
	c, cl := discoveryCase(t, "01-m5large-usw2-vpc192")
	cl.Endpoint, cl.OutpostARN, cl.ID = "https://localhost:6443", testOutpostARN, testClusterID
	eks := newEKS(t, cl)
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "etc"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "etc/hosts"), []byte("127.0.0.1\tlocalhost\n"), 0o644))
	_, err := runIn(t, c, dir, eks)
	must(t, err)

	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(dir, p))
		must(t, err)
		return string(b)
	}
	if b := read("/var/lib/kubelet/bootstrap-kubeconfig"); !strings.Contains(b, "        - \"-i\"\n        - \""+testClusterID+"\"\n") ||
		!strings.Contains(b, "server: https://localhost:6443\n") {
		t.Errorf("bootstrap-kubeconfig does not name the cluster ID and the server:\n%s", b)
	}
	if b := read("/var/lib/kubelet/kubeconfig"); !strings.Contains(b, "client-certificate: "+PathKubeletClientCert+"\n") || strings.Contains(b, "exec:") {
		t.Errorf("kubeconfig is not the client-certificate kubeconfig:\n%s", b)
	}
	if b := read(kubeletconf.ArgsDropInPath); !strings.Contains(b, " --bootstrap-kubeconfig="+kubeletconf.BootstrapKubeconfigPath) {
		t.Errorf("kubelet args lack --bootstrap-kubeconfig:\n%s", b)
	}
	hosts := read("/etc/hosts")
	want := "127.0.0.1\tlocalhost\n"
	for _, a := range addrs {
		if a != "127.0.0.1" {
			want += netip.MustParseAddr(a).String() + "\tlocalhost\t" + hostsMarker + "\n"
		}
	}
	if hosts != want {
		t.Errorf("/etc/hosts:\n%q\nwant\n%q", hosts, want)
	}

	// A reboot: the same node, the cache answers; /etc/hosts gets nothing twice.
	_, err = runIn(t, c, dir, eks)
	must(t, err)
	if got := read("/etc/hosts"); got != want {
		t.Errorf("second run changed /etc/hosts:\n%q\nwant\n%q", got, want)
	}
	if eks.Calls() != 1 {
		t.Errorf("%d DescribeCluster calls, want 1 (the second run reads the cache)", eks.Calls())
	}
}

// TestOutpostFlagWins: --enable-local-outpost false joins a cluster with an Outpost
// ARN as a cluster in the region (bootstrap.sh: the flag wins over the detection).
func TestOutpostFlagWins(t *testing.T) {
	c, cl := discoveryCase(t, "01-m5large-usw2-vpc192")
	cl.OutpostARN, cl.ID = testOutpostARN, testClusterID
	eks := newEKS(t, cl)
	dir := t.TempDir()
	_, err := runIn(t, c, dir, eks, "--enable-local-outpost", "false")
	must(t, err)
	checkGolden(t, dir, filepath.Join(goldenDir, "01-m5large-usw2-vpc192"))
	if _, err := os.Stat(filepath.Join(dir, "var/lib/kubelet/bootstrap-kubeconfig")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("bootstrap-kubeconfig written: %v", err)
	}
}

// TestOutpostNameThatNeverResolves: the boot fails after the bounded tries, naming
// the host, and writes nothing.
func TestOutpostNameThatNeverResolves(t *testing.T) {
	c, cl := discoveryCase(t, "01-m5large-usw2-vpc192")
	cl.OutpostARN, cl.ID = testOutpostARN, testClusterID
	eks := newEKS(t, cl)
	dir := t.TempDir()
	tries := 0
	_, err := runInEnv(t, c, dir, eks, nil, func(env *Env) {
		env.HostLookupAttempts, env.HostLookupInterval = 3, time.Millisecond
		env.LookupHost = func(context.Context, string) ([]string, error) {
			tries++
			return nil, &net.DNSError{Err: "no such host", IsNotFound: true}
		}
	})
	want := "the API server's name 0123456789ABCDEF0123456789ABCDEF.gr7.us-west-2.eks.amazonaws.com does not resolve after 3 tries"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
	if tries != 3 {
		t.Errorf("%d look-ups, want 3", tries)
	}
	if got := filesUnder(t, dir); len(got) != len(c.Files) {
		t.Errorf("wrote files: %v", got)
	}
}

// TestHostsFile: the lines of an earlier run are replaced, a mapping the file has
// already is not added again, and an endpoint that is an address needs no line.
func TestHostsFile(t *testing.T) {
	const m = "\t" + hostsMarker + "\n"
	tests := []struct {
		name  string
		h     APIServerHosts
		want  string
		write bool
	}{
		{
			"empty file",
			APIServerHosts{Host: "api.example.com", Addrs: []string{"10.0.0.2", "10.0.0.1"}},
			"10.0.0.2\tapi.example.com" + m + "10.0.0.1\tapi.example.com" + m, true,
		},
		{
			"earlier run's lines replaced",
			APIServerHosts{
				Host: "api.example.com", Addrs: []string{"10.0.0.3"},
				Hosts: []byte("127.0.0.1 localhost\n10.0.0.1\tapi.example.com" + m + "# mine\n10.0.0.9 other"),
			},
			"127.0.0.1 localhost\n# mine\n10.0.0.9 other\n10.0.0.3\tapi.example.com" + m, true,
		},
		{
			"the user's own line kept, not doubled",
			APIServerHosts{
				Host: "API.example.com", Addrs: []string{"10.0.0.1", "::1"},
				Hosts: []byte("10.0.0.1 x api.example.com # by hand\n"),
			},
			"10.0.0.1 x api.example.com # by hand\n::1\tAPI.example.com" + m, true,
		},
		{"IPv6 written canonically, once", APIServerHosts{Host: "h", Addrs: []string{"fd00:0::1", "fd00::1"}}, "fd00::1\th" + m, true},
		{"endpoint is an address", APIServerHosts{Hosts: []byte("x\n")}, "", false},
		{"resolved at boot (render)", APIServerHosts{Host: "h", AtBoot: true}, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, write := tc.h.HostsFile()
			if string(got) != tc.want || write != tc.write {
				t.Errorf("got %q, %v; want %q, %v", got, write, tc.want, tc.write)
			}
			if write { // what eksboot writes it accepts on the next boot: the same file
				again := tc.h
				again.Hosts = got
				if b, _ := again.HostsFile(); string(b) != string(got) {
					t.Errorf("second run: %q, want %q", b, got)
				}
			}
		})
	}
}

// TestOutpostNeedsAnID: the bootstrap.sh front end refuses a local cluster without
// its ID when nothing is looked up, naming the flag, and checks the ID's grammar.
func TestOutpostNeedsAnID(t *testing.T) {
	c, err := goldencase.Load(filepath.Join(goldenDir, "01-m5large-usw2-vpc192"))
	must(t, err)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--enable-local-outpost", "true"}, "--enable-local-outpost true needs --cluster-id"},
		{[]string{"--enable-local-outpost", "true", "--cluster-id", "a b"}, `--cluster-id "a b" is not a cluster ID`},
	} {
		_, err := fromArgs(append(slices.Clone(c.Args), tc.args...), func(string) string { return "" })
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
	// As bootstrap.sh, only "true" turns it on; anything else is false, with a warning.
	if cfg, err := fromArgs(append(slices.Clone(c.Args), "--enable-local-outpost", "yes"), func(string) string { return "" }); err != nil || cfg.LocalOutpost || len(cfg.Warnings) != 1 {
		t.Errorf("--enable-local-outpost yes: %+v, %v; want off with a warning", cfg, err)
	}
	cfg, err := fromArgs(append(slices.Clone(c.Args), "--enable-local-outpost", "true", "--cluster-id", testClusterID), func(string) string { return "" })
	if err != nil || !cfg.LocalOutpost || cfg.ClusterID != testClusterID {
		t.Errorf("a local cluster with its ID: %+v, %v", cfg, err)
	}
}
