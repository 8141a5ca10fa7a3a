package nodeconfig

import (
	"reflect"
	"strings"
	"testing"
)

const ncHead = "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\n"

func TestDecodeStrict(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{
			"unknown fields, all at once", ncHead + "spec:\n  kubelet:\n    flagz: [a]\n    config:\n      maxPodz: 3\n  clustr: {}\n",
			"p: spec.clustr: unknown field; p: spec.kubelet.flagz: unknown field; p: spec.kubelet.config.maxPodz: unknown field",
		},
		{
			"wrong types", ncHead + "spec:\n  cluster:\n    name: [x]\n  kubelet:\n    flags: --a\n    config:\n      maxPods: many\n",
			`p: spec.cluster.name: want a string, got a list; p: spec.kubelet.flags: want a list, got the string "--a"; p: spec.kubelet.config.maxPods: want a whole number, got the string "many"`,
		},
		{"wrong kind", "apiVersion: node.eks.aws/v1alpha1\nkind: Pod\n", `p: kind: "Pod", want NodeConfig`},
		{"wrong version and no kind", "apiVersion: v1\n", `p: apiVersion: "v1", want node.eks.aws/v1alpha1; p: kind: missing, want NodeConfig`},
		{"not an object", "- a\n- b\n", "p: want a NodeConfig object (apiVersion: node.eks.aws/v1alpha1, kind: NodeConfig), got a list"},
		{"not YAML", "a: [\n", "p: not YAML or JSON: yaml: line 1: did not find expected node content"},
		{"empty", "# nothing\n", "p: no NodeConfig in it (empty)"},
		{"second document bad", ncHead + "---\n" + ncHead + "spec: {x: 1}\n", "p document 2: spec.x: unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeNodeConfigs([]byte(tc.in), "p")
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v\nwant  %s", err, tc.want)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	a := ncHead + `spec:
  cluster: {name: a, cidr: 10.100.0.0/16}
  kubelet:
    config: {maxPods: 58, evictionHard: {memory.available: 5%}, featureGates: {A: true}}
    flags: [--node-labels=a=1]
`
	b := ncHead + `spec:
  cluster: {name: b, apiServerEndpoint: https://x, certificateAuthority: Q0E=}
  kubelet:
    config: {maxPods: 29, featureGates: {B: false}, clusterDNS: [10.0.0.10]}
    flags: [--node-labels=b=2]
  maxPods: {mode: prefix-delegation}
`
	nc, err := DecodeAndMerge([]Source{{"a", []byte(a)}, {"b", []byte(b)}})
	if err != nil {
		t.Fatal(err)
	}
	s := nc.Spec
	if s.Cluster.Name != "b" || s.Cluster.CIDR != "10.100.0.0/16" || s.Cluster.APIServerEndpoint != "https://x" {
		t.Errorf("cluster %+v: later scalars win, empty ones do not", s.Cluster)
	}
	if want := []string{"--node-labels=a=1", "--node-labels=b=2"}; !reflect.DeepEqual(s.Kubelet.Flags, want) {
		t.Errorf("flags %q, want %q (appended)", s.Kubelet.Flags, want)
	}
	wantConfig := map[string]any{
		"maxPods": 29.0, "evictionHard": map[string]any{"memory.available": "5%"},
		"featureGates": map[string]any{"A": true, "B": false}, "clusterDNS": []any{"10.0.0.10"},
	}
	if !reflect.DeepEqual(s.Kubelet.Config, wantConfig) {
		t.Errorf("kubelet.config %v\nwant %v", s.Kubelet.Config, wantConfig)
	}
	if s.MaxPods.Mode != "prefix-delegation" {
		t.Errorf("maxPods.mode %q", s.MaxPods.Mode)
	}
	if err := Validate(nc); err != nil {
		t.Error(err)
	}
}

func TestValidateRequired(t *testing.T) {
	err := Validate(&NodeConfig{Spec: Spec{Cluster: Cluster{Name: "x", CIDR: "nope"}}})
	want := "spec.cluster.apiServerEndpoint: required field missing (in every NodeConfig of the user data and drop-ins); " +
		"spec.cluster.certificateAuthority: required field missing (in every NodeConfig of the user data and drop-ins); " +
		`spec.cluster.cidr: "nope" is not a CIDR such as 10.100.0.0/16`
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant  %s", err, want)
	}
	if !strings.Contains(want, "apiServerEndpoint") {
		t.Fatal("unreachable")
	}
}
