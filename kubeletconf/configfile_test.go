package kubeletconf

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/assets"
)

func TestCheckConfigFile(t *testing.T) {
	deep := `{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration","featureGates":` + strings.Repeat(`{"a":`, 70) + `true` + strings.Repeat(`}`, 70) + `}`
	for _, tc := range []struct {
		name, in, wantErr string
		has               []string
	}{
		{"the AMI's template", string(assets.KubeletConfig), "", []string{"clusterDomain", "tlsCipherSuites"}},
		{"YAML, as the kubelet reads it", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\naddress: 192.168.0.8\nkubeAPIQPS: 50\n", "", []string{"address", "kubeAPIQPS"}},
		{"no type", `{"maxPods": 3}`, `apiVersion: missing, want kubelet.config.k8s.io/v1beta1 (the kubelet refuses the file); kind: missing, want KubeletConfiguration`, nil},
		{"another kind", `{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeProxyConfiguration"}`, `kind: "KubeProxyConfiguration", want KubeletConfiguration`, nil},
		{"unknown field", `{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", "kubeAPIQPZ": 5}`, `json: unknown field "kubeAPIQPZ"`, nil},
		{"wrong type", `{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", "maxPods": "many"}`, `cannot unmarshal string into Go struct field KubeletConfiguration.maxPods of type int32`, nil},
		{"a control character", `{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", "providerID": "a\u001bb"}`, `providerID: control character U+001B`, nil},
		{"not an object", `[1, 2]`, `want an object`, nil},
		{"neither JSON nor YAML", "{\n  \"maxPods\": 3,\n", `not JSON or YAML`, nil},
		{"too deep", deep, `nested more than 64 levels`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CheckConfigFile([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range tc.has {
				if !got.Has(k) {
					t.Errorf("no %s in %v", k, got.Map())
				}
			}
		})
	}
}

// TestBuildOnTheNodesFile: on a base the image and the user data left, bootstrap.sh's
// edits are applied and nothing else changes: keys it never sets survive, and the
// ones it sets (evictionHard, kubeReserved, maxPods, ...) are replaced.
func TestBuildOnTheNodesFile(t *testing.T) {
	var m map[string]any
	if err := json.Unmarshal(assets.KubeletConfig, &m); err != nil {
		t.Fatal(err)
	}
	m["kubeAPIQPS"], m["kubeAPIBurst"], m["registryPullQPS"] = 50.0, 100.0, 20.0
	m["systemReserved"] = map[string]any{"cpu": "100m", "memory": "200Mi"}
	m["evictionHard"] = map[string]any{"memory.available": "5%"}
	m["featureGates"] = map[string]any{"RotateKubeletServerCertificate": true, "DynamicResourceAllocation": false}
	b, _ := json.Marshal(m)
	base, err := CheckConfigFile(b)
	if err != nil {
		t.Fatal(err)
	}
	in := Input{
		Base: base, ClusterDNS: []string{"10.100.0.10"}, MaxPods: 29, SetMaxPods: true, CPUs: 2, ProviderID: "aws:///a/i",
		KubeletVersion: Version{1, 33, 1}, ReservedCgroups: true,
		FeatureGates: map[string]bool{"DynamicResourceAllocation": true, "MutableCSINodeAllocatableCount": true},
	}
	cfg, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if *cfg.KubeAPIQPS != 50 || cfg.KubeAPIBurst != 100 || *cfg.RegistryPullQPS != 20 || cfg.SystemReserved["memory"] != "200Mi" {
		t.Errorf("the node's keys are gone: %+v", cfg)
	}
	if len(cfg.EvictionHard) != 3 || cfg.EvictionHard["memory.available"] != "100Mi" || cfg.MaxPods != 29 || cfg.KubeReserved["memory"] != "574Mi" || cfg.ProviderID != "aws:///a/i" {
		t.Errorf("bootstrap.sh's edits are not applied: %+v", cfg)
	}
	if g := cfg.FeatureGates; g["DynamicResourceAllocation"] || !g["MutableCSINodeAllocatableCount"] || !g["RotateKubeletServerCertificate"] {
		t.Errorf("featureGates %v: want the node's gates as they are, and the table's where the node sets none", g)
	}
	// The same edits on the template give the template's node.
	tmpl, _ := CheckConfigFile(assets.KubeletConfig)
	in.Base, in.FeatureGates = tmpl, nil
	fromFile, _ := Build(in)
	in.Base = CheckedOverlay{}
	fromTemplate, _ := Build(in)
	a, _ := Marshal(fromFile)
	b2, _ := Marshal(fromTemplate)
	if string(a) != string(b2) {
		t.Errorf("the template read from the node and the embedded one differ:\n%s\n%s", a, b2)
	}
	if !IsTemplate(tmpl) || IsTemplate(base) {
		t.Errorf("IsTemplate: the template %v, an edited file %v", IsTemplate(tmpl), IsTemplate(base))
	}
}

// TestEffective: the drop-ins merge over the file in the order given, as JSON merge
// patches (RFC 7386).
func TestEffective(t *testing.T) {
	cfg, err := Build(benchInput)
	if err != nil {
		t.Fatal(err)
	}
	dropIn := func(doc string) DropIn {
		t.Helper()
		o, err := CheckConfigFile([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		return DropIn{Path: ConfigDropInDir + "/x.conf", Config: o}
	}
	got, err := Effective(cfg, []DropIn{
		dropIn(`{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration","maxPods":110,"evictionHard":{"memory.available":"200Mi"},"clusterDNS":["10.0.0.10","10.0.0.11"]}`),
		dropIn("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 58\nkubeReserved: null\nevictionHard:\n  nodefs.available: null\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.MaxPods != 58 || len(got.ClusterDNS) != 2 || got.KubeReserved != nil {
		t.Errorf("maxPods %d, clusterDNS %v, kubeReserved %v: want 58 (the later drop-in), the list replaced, kubeReserved removed", got.MaxPods, got.ClusterDNS, got.KubeReserved)
	}
	if e := got.EvictionHard; e["memory.available"] != "200Mi" || e["nodefs.inodesFree"] != "5%" || len(e) != 2 {
		t.Errorf("evictionHard %v: want the objects merged key by key, null removing one", e)
	}
	if same, _ := Effective(cfg, nil); same != cfg {
		t.Error("no drop-ins: want the file's configuration")
	}
}
