package bootstrap

import (
	"encoding/base64"
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/containerdconf"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/maxpods"
	"github.com/eksboot/eksboot/nodeconfig"
	"github.com/eksboot/eksboot/nodefile"
	"github.com/eksboot/eksboot/rootfs"
)

// TestFromNodeConfig: every NodeConfig value lands in its typed Config field, with no
// flag string in between.
func TestFromNodeConfig(t *testing.T) {
	yes, four := true, 4
	nc := &nodeconfig.NodeConfig{Spec: nodeconfig.Spec{
		Cluster: nodeconfig.Cluster{Name: "c", APIServerEndpoint: "https://x.example", CertificateAuthority: base64.StdEncoding.EncodeToString(testCA(t)), CIDR: "10.100.0.0/16"},
		Kubelet: nodeconfig.Kubelet{
			Config: checkedOverlay(t, map[string]any{"clusterDNS": []any{"169.254.20.10", "10.100.0.10"}, "maxPods": 58.0, "logging": map[string]any{"verbosity": 4.0}}),
			Flags:  []string{"--node-labels=a=b", "--x=has space"},
		},
		Containerd: nodeconfig.Containerd{Configs: []string{"[plugins]\n", "version = 2\n"}},
		Instance:   nodeconfig.Instance{LocalStorage: nodeconfig.LocalStorage{Strategy: "RAID0"}},
		MaxPods:    nodeconfig.MaxPods{Mode: "prefix-delegation", CustomNetworking: &yes, MaxENI: &four},
	}}
	s := DefaultSettings()
	s.Root, s.LogFormat = "/r", "json"
	c, err := FromNodeConfig(nc, s)
	if err != nil {
		t.Fatal(err)
	}
	if c.Settings != s || c.ClusterName != "c" || c.APIServerEndpoint != "https://x.example" || len(c.CA) == 0 ||
		c.ServiceIPv4CIDR != netip.MustParsePrefix("10.100.0.0/16") || c.IPFamily != "ipv4" || c.LocalDisks != "raid0" {
		t.Errorf("cluster and settings: %+v", c)
	}
	if !reflect.DeepEqual(c.DNSClusterIPs, []string{"169.254.20.10", "10.100.0.10"}) {
		t.Errorf("DNS %v", c.DNSClusterIPs)
	}
	if !reflect.DeepEqual(c.KubeletFlags, nc.Spec.Kubelet.Flags) || c.KubeletExtraArgs != `--node-labels=a=b "--x=has space"` {
		t.Errorf("flags %q, drop-in value %q", c.KubeletFlags, c.KubeletExtraArgs)
	}
	if o := c.KubeletConfigOverlay.Map(); o["clusterDNS"] != nil || o["maxPods"] != 58.0 || !c.KubeletVerbosityGiven || c.KubeletMaxPods != 58 {
		t.Errorf("overlay %v, verbosity given %v, max pods %d", o, c.KubeletVerbosityGiven, c.KubeletMaxPods)
	}
	if c.MaxPodsMode != "prefix-delegation" || c.MaxPodsOptions != (maxpods.Options{PrefixDelegation: true, CustomNetworking: true, MaxENI: 4}) {
		t.Errorf("max pods %s %+v", c.MaxPodsMode, c.MaxPodsOptions)
	}
	want := []containerdconf.ContainerdOverlay{{Name: "spec.containerd.config", TOML: "[plugins]\n"}, {Name: "spec.containerd.config", TOML: "version = 2\n"}}
	if !reflect.DeepEqual(c.ContainerdOverlays, want) {
		t.Errorf("containerd overlays %+v", c.ContainerdOverlays)
	}

	nc.Spec.Cluster.CIDR = "fd00:10:96::/112"
	if c, err := FromNodeConfig(nc, s); err != nil || c.ServiceIPv6CIDR != netip.MustParsePrefix("fd00:10:96::/112") || c.IPFamily != "ipv6" || c.ServiceIPv4CIDR.IsValid() {
		t.Errorf("IPv6 cidr: %+v, %v", c, err)
	}
}

// TestFromNodeConfigErrorsNameSpecFields: every problem at once, each naming its
// spec.* path (no flag name rewritten).
func TestFromNodeConfigErrorsNameSpecFields(t *testing.T) {
	yes := true
	nc := &nodeconfig.NodeConfig{Spec: nodeconfig.Spec{
		Cluster:      nodeconfig.Cluster{Name: "-c", EnableOutpost: &yes, CertificateAuthority: "dGVzdA==", APIServerEndpoint: "http://x", CIDR: "10.100.0.0"},
		Instance:     nodeconfig.Instance{LocalStorage: nodeconfig.LocalStorage{Strategy: "RAID5"}, Environment: map[string]map[string]string{"sshd": {"A": "b"}}},
		Kubelet:      nodeconfig.Kubelet{MaxPodsExpression: "max_pods +", Flags: []string{"--a=b\nc"}},
		FeatureGates: map[string]bool{"InstanceIdNodeName": true, "FastImagePull": true, "Turbo": false},
		MaxPods:      nodeconfig.MaxPods{Mode: "lots"},
	}}
	_, err := FromNodeConfig(nc, DefaultSettings())
	// Ten problems are listed, and the count of the rest (one readable line).
	want := `spec.cluster.name "-c" is not a cluster name: 1-100 letters, digits, '-' or '_', starting with a letter or digit; ` +
		"spec.cluster.id: required when spec.cluster.enableOutpost is true (the kubelet's bootstrap token names a local cluster by its ID); " +
		"spec.cluster.certificateAuthority: does not decode to a PEM certificate; want the base64 encoding of the cluster CA's PEM certificate; " +
		`spec.cluster.apiServerEndpoint "http://x": the scheme is not https; want an https URL such as https://0123ABCD.gr7.us-west-2.eks.amazonaws.com; ` +
		`spec.cluster.cidr "10.100.0.0": want the cluster's service CIDR, such as 10.100.0.0/16 or fd00:10:96::/112; ` +
		"spec.kubelet.flags[0]: a line break at byte 5 is not allowed; put all arguments on one line; " +
		`spec.kubelet.maxPodsExpression "max_pods +": column 11: the expression ends too early; ` +
		"want CEL over default_enis, ips_per_eni, max_pods and numbers with + - * / %, == != < <= > >=, && || !, c ? a : b, int() and double(); " +
		`spec.maxPods.mode "lots": want eni-max-pods, secondary-ip, prefix-delegation or ipv6; ` +
		`spec.instance.localStorage.strategy: "RAID5", want RAID0, RAID10 or Mount; ` +
		"spec.instance.environment.sshd: unknown key, want default, kubelet or containerd; " +
		"and 1 more"
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant  %s", err, want)
	}
	nc.Spec = nodeconfig.Spec{Cluster: nodeconfig.Cluster{Name: "c"}, FeatureGates: nc.Spec.FeatureGates}
	_, err = FromNodeConfig(nc, DefaultSettings())
	want = "spec.featureGates.Turbo: no such feature gate (eksboot knows InstanceIdNodeName, FastImagePull, OSManagedNoManageENIs)"
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant  %s", err, want)
	}
	if _, ok := err.(*UsageError); !ok {
		t.Errorf("error %T, want a *UsageError", err)
	}
}

// TestFromNodeConfigChecksTheContainerdTOML: spec.containerd.config is checked
// before any fact is read, with its depth scanned before it is decoded and its
// strings free of control characters.
func TestFromNodeConfigChecksTheContainerdTOML(t *testing.T) {
	for doc, want := range map[string]string{
		strings.Repeat("a.", 100_000) + "x = 1\n":                "spec.containerd.config: nested more than 64 levels deep (line 1)",
		"[plugins.x]\nmirror = \"https://m\\r\\nInjected: 1\"\n": "spec.containerd.config.plugins.x.mirror: control character U+000D at byte 9 is not allowed",
	} {
		nc := &nodeconfig.NodeConfig{Spec: nodeconfig.Spec{
			Cluster:    nodeconfig.Cluster{Name: "c"},
			Containerd: nodeconfig.Containerd{Configs: []string{doc}},
		}}
		_, err := FromNodeConfig(nc, DefaultSettings())
		if err == nil || err.Error() != want {
			t.Errorf("error %v\nwant  %s", err, want)
		}
	}
}

// TestComputeRefusesAFileTheNextBootCannotRead: a file over rootfs.DefaultReadLimit
// is an error naming the field it is made of and the file.
func TestComputeRefusesAFileTheNextBootCannotRead(t *testing.T) {
	// The renderer names the input of each file; the spec's annotation is the
	// excess, the rest of the spec about 1.5 KiB.
	big := func(n int) []nodefile.File {
		files, err := containerdconf.Files(containerdconf.Node{
			Config:                 containerdconf.ContainerdInput{Major: 1},
			BaseRuntimeSpec:        true,
			BaseRuntimeSpecOverlay: map[string]any{"annotations": map[string]any{"x": strings.Repeat("a", n)}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	files := big(rootfs.DefaultReadLimit)
	err := checkFileSizes(files)
	want := fmt.Sprintf("spec.containerd.baseRuntimeSpec: /etc/containerd/base-runtime-spec.json would be %d bytes, more than the 4194304 eksboot reads back at the next boot", len(files[1].Data))
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant  %s", err, want)
	}
	if err := checkFileSizes(big(rootfs.DefaultReadLimit / 2)); err != nil {
		t.Errorf("a file under the limit: %v", err)
	}
	if err := checkFileSizes([]nodefile.File{{Path: kubeletconf.ConfigPath, Data: make([]byte, rootfs.DefaultReadLimit)}}); err != nil {
		t.Errorf("a file of exactly the limit: %v", err)
	}
}

// checkedOverlay is m checked as nodeconfig's decoding checks spec.kubelet.config.
func checkedOverlay(t *testing.T, m map[string]any) kubeletconf.CheckedOverlay {
	t.Helper()
	o, err := kubeletconf.CheckOverlay(m)
	if err != nil {
		t.Fatal(err)
	}
	return o
}
