package bootstrap

import (
	"reflect"
	"testing"

	"github.com/eksboot/eksboot/userdata"
)

func TestNodeConfigOptions(t *testing.T) {
	yes, four := true, 4
	nc := &userdata.NodeConfig{Spec: userdata.Spec{
		Cluster: userdata.Cluster{Name: "c", APIServerEndpoint: "https://x", CertificateAuthority: "Q0E=", CIDR: "10.100.0.0/16"},
		Kubelet: userdata.Kubelet{
			Config: map[string]any{"clusterDNS": []any{"169.254.20.10", "10.100.0.10"}, "maxPods": 58.0},
			Flags:  []string{"--node-labels=a=b", "--x=has space"},
		},
		Instance: userdata.Instance{LocalStorage: userdata.LocalStorage{Strategy: "RAID0"}},
		MaxPods:  userdata.MaxPods{Mode: "prefix-delegation", CustomNetworking: &yes, MaxENI: &four},
	}}
	base := Options{Root: "/r", LogFormat: "json"}
	o, x, err := NodeConfigOptions(nc, base)
	if err != nil {
		t.Fatal(err)
	}
	want := Options{Root: "/r", LogFormat: "json", ClusterName: "c", APIServerEndpoint: "https://x", B64ClusterCA: "Q0E=",
		ServiceIPv4CIDR: "10.100.0.0/16", DNSClusterIP: "169.254.20.10,10.100.0.10", LocalDisks: "raid0",
		KubeletExtraArgs: `--node-labels=a=b "--x=has space"`, MaxPodsMode: "prefix-delegation", MaxPodsCustomNetworking: true, MaxPodsMaxENI: 4}
	if !reflect.DeepEqual(o, want) {
		t.Errorf("options\n%+v\nwant\n%+v", o, want)
	}
	if !reflect.DeepEqual(x.KubeletConfig, map[string]any{"maxPods": 58.0}) {
		t.Errorf("overlay %v, want maxPods only (clusterDNS became --dns-cluster-ip)", x.KubeletConfig)
	}

	nc.Spec.Cluster.CIDR = "fd00:10:96::/112"
	if o, _, _ := NodeConfigOptions(nc, base); o.ServiceIPv6CIDR != "fd00:10:96::/112" || o.IPFamily != "ipv6" || o.ServiceIPv4CIDR != "" {
		t.Errorf("IPv6 cidr: %+v", o)
	}
}

func TestNodeConfigOptionsUnsupported(t *testing.T) {
	yes := true
	nc := &userdata.NodeConfig{Spec: userdata.Spec{
		Cluster:      userdata.Cluster{EnableOutpost: &yes},
		Containerd:   userdata.Containerd{BaseRuntimeSpec: map[string]any{"process": map[string]any{}}},
		Instance:     userdata.Instance{LocalStorage: userdata.LocalStorage{Strategy: "RAID5"}, Environment: map[string]map[string]string{"default": {"A": "b"}}},
		Kubelet:      userdata.Kubelet{MaxPodsExpression: "max_pods"},
		FeatureGates: map[string]bool{"InstanceIdNodeName": true},
	}}
	_, x, err := NodeConfigOptions(nc, Options{})
	if x.BaseRuntimeSpec == nil {
		t.Errorf("spec.containerd.baseRuntimeSpec was dropped")
	}
	want := "spec.cluster.enableOutpost: not supported by eksboot yet (see docs/compat.md); " +
		`spec.instance.localStorage.strategy: "RAID5", want RAID0, RAID10 or Mount; ` +
		"spec.instance.environment: not supported by eksboot yet (see docs/compat.md); " +
		"spec.featureGates.InstanceIdNodeName: not supported by eksboot yet (see docs/compat.md); " +
		"spec.kubelet.maxPodsExpression: not supported by eksboot; use spec.maxPods (mode, customNetworking, securityGroupsForPods, maxENI, uncapped) or kubelet.config.maxPods"
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant  %s", err, want)
	}
}
