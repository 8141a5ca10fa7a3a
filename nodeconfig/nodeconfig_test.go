package nodeconfig

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/inputcheck"
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
		// What the walk takes as it is, the one strict check refuses, in the same decoding.
		{"bad duration", ncHead + "spec:\n  kubelet:\n    config:\n      shutdownGracePeriod: 30x\n", `p: spec.kubelet.config: time: unknown unit "x" in duration "30x"`},
		{"out of range", ncHead + "spec:\n  kubelet:\n    config:\n      maxPods: 10000000000\n", "p: spec.kubelet.config: json: cannot unmarshal number 10000000000 into Go struct field KubeletConfiguration.maxPods of type int32"},
		{"config not an object", ncHead + "spec:\n  kubelet:\n    config: [a]\n", "p: spec.kubelet.config: want an object, got a list"},
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
	if !reflect.DeepEqual(s.Kubelet.Config.Map(), wantConfig) {
		t.Errorf("kubelet.config %v\nwant %v", s.Kubelet.Config.Map(), wantConfig)
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

// deepBlock is a YAML mapping of d nested levels in block style, indented under
// indent, "a:" each.
func deepBlock(indent string, d int) string {
	var b strings.Builder
	for i := range d - 1 {
		b.WriteString(indent + strings.Repeat(" ", i) + "a:\n")
	}
	b.WriteString(indent + strings.Repeat(" ", d-1) + "a: 1\n")
	return b.String()
}

// TestDecodeRefusesDeepDocuments: a NodeConfig nests at most 64 levels (the
// document counted as one), in block or flow style or through aliases; deeper is
// an error naming the field, before the document is decoded.
func TestDecodeRefusesDeepDocuments(t *testing.T) {
	spec := ncHead + "spec:\n  containerd:\n    baseRuntimeSpec:\n"
	// The document, spec, containerd: baseRuntimeSpec's own mapping is level 4.
	for _, tc := range []struct {
		name, in, want string
	}{
		{"block", spec + deepBlock("      ", inputcheck.MaxDepth-2), "p: spec.containerd.baseRuntimeSpec: nested more than 64 levels deep (line 67)"},
		{"flow", spec + "      a: " + strings.Repeat("[", 62) + strings.Repeat("]", 62) + "\n", "p: spec.containerd.baseRuntimeSpec: nested more than 64 levels deep (line 6)"},
		{"flow, 2,500 deep", spec + "      a: " + strings.Repeat("{a: ", 2500) + "1" + strings.Repeat("}", 2500) + "\n", "p: spec.containerd.baseRuntimeSpec: nested more than 64 levels deep (line 6)"},
		{
			"aliases",
			ncHead + "metadata:\n  x0: &a0 [1]\n" + func() string {
				var b strings.Builder
				for i := 1; i < 70; i++ {
					fmt.Fprintf(&b, "  x%d: &a%d [*a%d]\n", i, i, i-1)
				}
				return b.String()
			}() + "spec:\n  kubelet:\n    config:\n      a: *a69\n",
			"p: metadata.x62[0]: nested more than 64 levels deep (line 66); p: metadata.x63[0]: ",
		},
		{"JSON", `{"apiVersion": "node.eks.aws/v1alpha1", "kind": "NodeConfig", "spec": {"kubelet": {"config": ` + strings.Repeat(`{"a": `, 70) + "1" + strings.Repeat("}", 70) + "}}}", "p: spec.kubelet.config: nested more than 64 levels deep (line 1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeNodeConfigs([]byte(tc.in), "p")
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v\nwant  %s", err, tc.want)
			}
		})
	}
	ok := spec + deepBlock("      ", inputcheck.MaxDepth-3)
	if _, err := DecodeNodeConfigs([]byte(ok), "p"); err != nil {
		t.Errorf("64 levels: %v", err)
	}
}

// TestDecodeRefusesControlCharacters: no key or string of a NodeConfig holds a
// control character (a tab included), except where the field's own check decides
// (flags, environment values, the CA's base64, the containerd TOML document).
func TestDecodeRefusesControlCharacters(t *testing.T) {
	for _, tc := range []struct {
		name, spec, want string
	}{
		{"nameserver", `{instance: {network: {nameservers: ["fe80::1%eth0\nDNSSEC=no"]}}}`, "p: spec.instance.network.nameservers[0]: control character U+000A at byte 12 is not allowed"},
		{"search domain", `{instance: {network: {domains: ["a.example\tb"]}}}`, "p: spec.instance.network.domains[0]: control character U+0009 at byte 9 is not allowed"},
		{"taint", `{kubelet: {config: {registerWithTaints: [{key: "a\u001b[2J", effect: NoSchedule}]}}}`, "p: spec.kubelet.config.registerWithTaints[0].key: control character U+001B at byte 1 is not allowed"},
		{"feature gate name", `{kubelet: {config: {featureGates: {"A\rB": true}}}}`, `p: spec.kubelet.config.featureGates."A\rB": key: control character U+000D at byte 1 is not allowed`},
		{"mount path", `{instance: {localStorage: {strategy: RAID0, mountPath: "/mnt/\u0085x"}}}`, "p: spec.instance.localStorage.mountPath: control character U+0085 at byte 5 is not allowed"},
		{"base runtime spec", `{containerd: {baseRuntimeSpec: {process: {env: ["A=\u0000"]}}}}`, "p: spec.containerd.baseRuntimeSpec.process.env[0]: control character U+0000 at byte 2 is not allowed"},
		{"cluster ID", `{cluster: {id: "x\ny"}}`, "p: spec.cluster.id: control character U+000A at byte 1 is not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeNodeConfigs([]byte(ncHead+"spec: "+tc.spec+"\n"), "p")
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v\nwant  %s", err, tc.want)
			}
		})
	}
	fine := ncHead + "spec:\n  kubelet:\n    flags: [\"--a=b\\tc\"]\n  instance:\n    environment: {kubelet: {A: \"x\\ty\"}}\n  containerd:\n    config: |\n      [plugins]\n        x = 1\n"
	if _, err := DecodeNodeConfigs([]byte(fine), "p"); err != nil {
		t.Errorf("fields with their own checks: %v", err)
	}
}
