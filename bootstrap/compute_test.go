package bootstrap

import (
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/containerdconf"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/nodefile"
	"github.com/eksboot/eksboot/nodesys"
	"github.com/eksboot/eksboot/rootfs"
)

func TestClusterDNS(t *testing.T) {
	tests := []struct {
		name string
		c    Config
		vpc  []string
		want []string
	}{
		{"flag list as given", Config{IPFamily: "ipv4", DNSClusterIPs: []string{"10.0.0.10", "10.0.0.11"}}, []string{"10.0.0.0/16"}, []string{"10.0.0.10", "10.0.0.11"}},
		{"vpc in 10/8", Config{IPFamily: "ipv4"}, []string{"192.168.0.0/16", "10.1.0.0/16"}, []string{"172.20.0.10"}},
		{"vpc not in 10/8", Config{IPFamily: "ipv4"}, []string{"192.168.0.0/16"}, []string{"10.100.0.10"}},
		{"no vpc cidrs", Config{IPFamily: "ipv4"}, nil, []string{"10.100.0.10"}},
		{"service ipv4 cidr", Config{IPFamily: "ipv4", ServiceIPv4CIDR: netip.MustParsePrefix("10.96.0.0/12")}, nil, []string{"10.96.0.10"}},
		{"service ipv4 cidr not on .0", Config{IPFamily: "ipv4", ServiceIPv4CIDR: netip.MustParsePrefix("172.16.5.128/25")}, nil, []string{"172.16.5.138"}},
		{"service ipv6 cidr", Config{IPFamily: "ipv6", ServiceIPv6CIDR: netip.MustParsePrefix("fd00:10:96::/112")}, nil, []string{"fd00:10:96::a"}},
		{"service ipv6 cidr not on ::", Config{IPFamily: "ipv6", ServiceIPv6CIDR: netip.MustParsePrefix("fd12:3456:789a::100/120")}, nil, []string{"fd12:3456:789a::10a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ClusterDNS(tc.c.DNSClusterIPs, tc.c.givenCluster(), tc.vpc)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ClusterDNS = %v, want %v", got, tc.want)
			}
		})
	}
	if _, err := ClusterDNS(nil, ClusterFacts{IPFamily: "ipv4", ServiceIPv4CIDR: netip.MustParsePrefix("10.0.0.0/30")}, nil); err == nil {
		t.Error("a /30 service CIDR has no tenth address: want an error")
	}
}

func TestPauseImage(t *testing.T) {
	tests := []struct {
		name, region, domain, account, image, version string
		fips                                          bool
		want                                          string
	}{
		{"us-west-2", "us-west-2", "amazonaws.com", "", "", "3.5", false, "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/pause:3.5"},
		{"own account region", "af-south-1", "amazonaws.com", "", "", "3.5", false, "877085696533.dkr.ecr.af-south-1.amazonaws.com/eks/pause:3.5"},
		{"china", "cn-north-1", "amazonaws.com.cn", "", "", "3.5", false, "918309763551.dkr.ecr.cn-north-1.amazonaws.com.cn/eks/pause:3.5"},
		{"unknown china region falls back", "cn-south-9", "amazonaws.com.cn", "", "", "3.5", false, "961992271922.dkr.ecr.cn-northwest-1.amazonaws.com.cn/eks/pause:3.5"},
		{"unknown gov region falls back", "us-gov-south-9", "amazonaws.com", "", "", "3.5", false, "013241004608.dkr.ecr.us-gov-west-1.amazonaws.com/eks/pause:3.5"},
		{"isob before iso", "us-isob-south-9", "sc2s.sgov.gov", "", "", "3.5", false, "187977181151.dkr.ecr.us-isob-east-1.sc2s.sgov.gov/eks/pause:3.5"},
		{"unknown region", "xx-new-1", "amazonaws.com", "", "", "3.5", false, "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/pause:3.5"},
		{"explicit account keeps region", "xx-new-1", "amazonaws.com", "123456789012", "", "3.9", false, "123456789012.dkr.ecr.xx-new-1.amazonaws.com/eks/pause:3.9"},
		{"fips", "us-east-1", "amazonaws.com", "", "", "3.5", true, "602401143452.dkr.ecr-fips.us-east-1.amazonaws.com/eks/pause:3.5"},
		{"image override", "us-east-1", "amazonaws.com", "", "registry.example.com/pause", "3.10", false, "registry.example.com/pause:3.10"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &Config{PauseContainerAccount: tc.account, PauseContainerImage: tc.image, PauseContainerVersion: tc.version}
			if got := PauseImage(c, tc.region, tc.domain, tc.fips); got != tc.want {
				t.Errorf("PauseImage = %s, want %s", got, tc.want)
			}
		})
	}
}

// everyFile is a node that owns every file the renderers can return: a local
// cluster with extra args, FastImagePull, a base runtime spec, the AMI's
// sandbox-image.service, every spec.instance.environment key, a resolved drop-in,
// /etc/hosts, the BPF mount, graceful shutdown, and eksboot's cluster cache. The
// files that only a smaller node removes (the extra args drop-in, ...) are added
// as removals from a node without them.
func everyFile(t *testing.T) *Node {
	t.Helper()
	row, _ := kubeletconf.Kubelet(kubeletconf.Version{Major: 1, Minor: 32, Patch: 9})
	cfg, err := kubeletconf.Build(kubeletconf.Input{ClusterDNS: []string{"10.100.0.10"}, MaxPods: 29, CPUs: 2, ProviderID: "aws:///us-west-2a/i-1", KubeletVersion: kubeletconf.Version{Major: 1, Minor: 32, Patch: 9}, ShutdownGracePeriod: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	kn := kubeletconf.Node{
		CA: []byte("ca"), Kubeconfig: kubeletconf.Kubeconfig{Server: "https://example.com", ClusterName: "c", Region: "us-west-2"},
		ClientCert: PathKubeletClientCert, BootstrapClusterName: "id", Config: cfg, Args: "--v=2", ExtraArgs: "--max-pods=3", CredentialProvider: &row,
	}
	cn := containerdconf.Node{
		Config:          containerdconf.ContainerdInput{Major: 2, Minor: 2, SandboxImage: "localhost/kubernetes/pause:latest", SOCI: true},
		BaseRuntimeSpec: true, SandboxImageUnit: []byte("[Unit]\n"),
	}
	env, err := nodesys.InstanceEnvironment(map[string]map[string]string{"default": {"A": "1"}, "kubelet": {"B": "2"}, "containerd": {"C": "3"}})
	if err != nil {
		t.Fatal(err)
	}
	sn := nodesys.Node{Environment: env, Resolved: []byte("[Resolve]\n"), Hosts: []byte("127.0.0.1 localhost\n"), BPFMount: true, ShutdownDelay: time.Minute}
	n := &Node{}
	render := func(kn kubeletconf.Node, cn containerdconf.Node, sn nodesys.Node) {
		k, err := kubeletconf.Files(kn)
		if err != nil {
			t.Fatal(err)
		}
		c, err := containerdconf.Files(cn)
		if err != nil {
			t.Fatal(err)
		}
		s, err := nodesys.Files(sn)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range slices.Concat(k, c, s) {
			if !slices.ContainsFunc(n.Owned, func(o nodefile.File) bool { return o.Path == f.Path }) {
				n.Owned = append(n.Owned, f)
			}
		}
	}
	render(kn, cn, sn)
	kn.ExtraArgs, kn.ClientCert, cn.Config.SOCI, sn.ShutdownDelay = "", "", false, 0
	render(kn, cn, sn)
	n.Owned = append(n.Owned, nodefile.File{Path: pathClusterCacheDir + "/c.json", Data: []byte("{}"), Mode: 0o600, Secret: true})
	return n
}

func TestActions(t *testing.T) {
	n := everyFile(t)
	ch := func(paths ...string) []rootfs.Change {
		var cs []rootfs.Change
		for _, p := range paths {
			cs = append(cs, rootfs.Change{Path: p})
		}
		return cs
	}
	withSandbox := *n
	withSandbox.SandboxImageUnit = true
	tests := []struct {
		name    string
		node    *Node
		changes []rootfs.Change
		want    []string
	}{
		{"nothing changed: start is a no-op when running", n, nil, []string{"enable kubelet.service", "start kubelet.service"}},
		{"extra args changed", n, ch(kubeletconf.ExtraArgsDropInPath), []string{"daemon-reload", "enable kubelet.service", "restart kubelet.service"}},
		{"kubelet config changed", n, ch(kubeletconf.ConfigPath), []string{"enable kubelet.service", "restart kubelet.service"}},
		{"containerd changed", &withSandbox, ch(containerdconf.ConfigPath), []string{
			"enable containerd.service", "enable sandbox-image.service", "restart containerd.service", "restart sandbox-image.service",
			"enable kubelet.service", "restart kubelet.service",
		}},
		{"logind drop-in changed: no daemon-reload, logind re-reads on SIGHUP", n, ch(nodesys.LogindDropIn, kubeletconf.ConfigPath), []string{
			"signal systemd-logind.service", "enable kubelet.service", "restart kubelet.service",
		}},
		{"first boot", n, ch(kubeletconf.DefaultCAFile, kubeletconf.KubeconfigPath, kubeletconf.ConfigPath, containerdconf.ConfigPath, kubeletconf.UnitPath, kubeletconf.ArgsDropInPath, nodesys.BPFMountPath), []string{
			"daemon-reload", "enable sys-fs-bpf.mount", "start sys-fs-bpf.mount", "enable containerd.service", "restart containerd.service",
			"enable kubelet.service", "restart kubelet.service",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, a := range Actions(tc.node, tc.changes) {
				got = append(got, a.String())
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Actions =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// TestEveryChangedFileActsOnItsUnits fails when a file can change with no unit
// restarted: for each file the renderers return, a change to it alone must restart,
// start or signal each unit it names (enabling is not enough), a daemon-reload must
// come first when systemd reads it, and only the files no unit reads again may name
// none.
func TestEveryChangedFileActsOnItsUnits(t *testing.T) {
	unitless := map[string]bool{nodesys.HostsPath: true} // read at each lookup
	n := everyFile(t)
	if len(n.Owned) < 20 {
		t.Fatalf("only %d files", len(n.Owned))
	}
	for _, f := range n.Owned {
		acts := Actions(n, []rootfs.Change{{Path: f.Path}})
		if len(f.Units) == 0 && !unitless[f.Path] && !strings.HasPrefix(f.Path, pathClusterCacheDir+"/") {
			t.Errorf("%s names no unit", f.Path)
		}
		for _, u := range f.Units {
			if !slices.ContainsFunc(acts, func(a Action) bool { return a.Unit == u && a.Verb != "enable" }) {
				t.Errorf("%s changed: %v do not restart, start or signal %s", f.Path, acts, u)
			}
		}
		if reloads := len(acts) > 0 && acts[0].Verb == "daemon-reload"; reloads != f.Reload {
			t.Errorf("%s changed: daemon-reload first %v, want %v (%v)", f.Path, reloads, f.Reload, acts)
		}
		if f.Reload != (strings.HasPrefix(f.Path, "/etc/systemd/system/") || f.Path == nodesys.ManagerEnvironmentPath) {
			t.Errorf("%s: Reload %v, but systemd reads the files of /etc/systemd/system and the manager's configuration", f.Path, f.Reload)
		}
	}
}
