package kubeletconf

import (
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
		{"unknown field", map[string]any{"maxPodz": 1.0}, nil, `kubelet config overlay: json: unknown field "maxPodz"`},
		{"wrong type", map[string]any{"maxPods": "many"}, nil, "kubelet config overlay: json: cannot unmarshal string into Go struct field KubeletConfiguration.maxPods of type int32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Overlay(base, tc.overlay)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %s", err, tc.wantErr)
				}
				return
			}
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
