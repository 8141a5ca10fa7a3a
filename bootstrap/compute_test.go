package bootstrap

import (
	"net/netip"
	"reflect"
	"testing"

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

func TestActions(t *testing.T) {
	n := &Node{}
	ch := func(paths ...string) []rootfs.Change {
		var cs []rootfs.Change
		for _, p := range paths {
			cs = append(cs, rootfs.Change{Path: p})
		}
		return cs
	}
	tests := []struct {
		name    string
		node    *Node
		changes []rootfs.Change
		want    []string
	}{
		{"nothing changed: start is a no-op when running", n, nil, []string{"enable kubelet.service", "start kubelet.service"}},
		{"extra args changed", n, ch(pathExtraArgsDropIn), []string{"daemon-reload", "enable kubelet.service", "restart kubelet.service"}},
		{"kubelet config changed", n, ch(pathKubeletConfig), []string{"enable kubelet.service", "restart kubelet.service"}},
		{"containerd changed", &Node{SandboxImageUnit: true}, ch(pathContainerdConfig), []string{
			"enable containerd.service", "enable sandbox-image.service", "restart containerd.service", "restart sandbox-image.service",
			"enable kubelet.service", "restart kubelet.service",
		}},
		{"logind drop-in changed: no daemon-reload, logind re-reads on SIGHUP", n, ch(nodesys.LogindDropIn, pathKubeletConfig), []string{
			"signal systemd-logind.service", "enable kubelet.service", "restart kubelet.service",
		}},
		{"first boot", &Node{BPFUnit: true}, ch(pathCA, pathKubeconfig, pathKubeletConfig, pathContainerdConfig, pathKubeletUnit, pathArgsDropIn, pathBPFUnit), []string{
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
