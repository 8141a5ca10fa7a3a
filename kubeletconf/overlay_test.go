package kubeletconf

import (
	"reflect"
	"strings"
	"testing"
)

func TestOverlay(t *testing.T) {
	base, err := Build(Input{ClusterDNS: []string{"10.100.0.10"}, MaxPods: 29, SetMaxPods: true, CPUs: 2, ProviderID: "aws:///a/i", KubeletVersion: Version{1, 32, 0}, ReservedCgroups: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		overlay map[string]any
		check   func(t *testing.T, out string)
		wantErr string
	}{
		{
			"maps merge, scalars replace",
			map[string]any{"maxPods": 110.0, "evictionHard": map[string]any{"memory.available": "5%"}, "shutdownGracePeriod": "30s"},
			func(t *testing.T, out string) {
				for _, want := range []string{`"maxPods": 110`, `"memory.available": "5%"`, `"nodefs.available": "10%"`, `"shutdownGracePeriod": "30s"`} {
					if !strings.Contains(out, want) {
						t.Errorf("no %s in\n%s", want, out)
					}
				}
			}, "",
		},
		{"nothing", nil, func(t *testing.T, out string) {
			if strings.Contains(out, "infoBufferSize") {
				t.Errorf("the round trip added zero values:\n%s", out)
			}
		}, ""},
		{"unknown field", map[string]any{"maxPodz": 1.0}, nil, `json: unknown field "maxPodz"`},
		{"wrong type", map[string]any{"maxPods": "many"}, nil, "json: cannot unmarshal string into Go struct field KubeletConfiguration.maxPods of type int32"},
		{"out of range", map[string]any{"maxPods": 1e10}, nil, "json: cannot unmarshal number 10000000000 into Go struct field KubeletConfiguration.maxPods of type int32"},
		{"bad duration", map[string]any{"shutdownGracePeriod": "30x"}, nil, `time: unknown unit "x" in duration "30x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checked, err := CheckOverlay(tc.overlay)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := Overlay(base, checked)
			if err != nil {
				t.Fatal(err)
			}
			out, err := Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, string(out))
		})
	}
}

// TestCheckedOverlayMerges: merging two checked overlays merges objects key by key,
// replaces the rest, recomputes the fields and changes neither input.
func TestCheckedOverlayMerges(t *testing.T) {
	a, err := CheckOverlay(map[string]any{"maxPods": 29.0, "evictionHard": map[string]any{"memory.available": "5%"}, "clusterDNS": []any{"10.0.0.10"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := CheckOverlay(map[string]any{"maxPods": 58.0, "evictionHard": map[string]any{"nodefs.available": "10%"}, "logging": map[string]any{"verbosity": 4.0}})
	if err != nil {
		t.Fatal(err)
	}
	m := a.Merge(b)
	want := map[string]any{"maxPods": 58.0, "evictionHard": map[string]any{"memory.available": "5%", "nodefs.available": "10%"}, "clusterDNS": []any{"10.0.0.10"}, "logging": map[string]any{"verbosity": 4.0}}
	if !reflect.DeepEqual(m.Map(), want) {
		t.Errorf("merged %v\nwant   %v", m.Map(), want)
	}
	if f := m.Fields(); f.MaxPods != 58 || !reflect.DeepEqual(f.ClusterDNS, []string{"10.0.0.10"}) || !f.VerbosityGiven {
		t.Errorf("fields %+v", f)
	}
	if len(a.Map()["evictionHard"].(map[string]any)) != 1 || a.Fields().MaxPods != 29 {
		t.Errorf("the merge changed its input: %v", a.Map())
	}
	if w := m.Without("clusterDNS"); w.Has("clusterDNS") || w.Fields().ClusterDNS != nil || !m.Has("clusterDNS") {
		t.Errorf("Without: %v, and the original %v", w.Map(), m.Map())
	}
}
