package kubeletconf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/assets"
)

func TestReservedCPU(t *testing.T) {
	// The verified table of bootstrap-sh-behavior.md §3.5, plus the edges.
	want := map[int]int{
		-1: 0, 0: 0, 1: 60, 2: 70, 3: 75, 4: 80, 5: 82, 6: 85, 8: 90, 16: 110, 32: 150,
		48: 190, 64: 230, 96: 310, 128: 390, 192: 550, 7: 87, 9: 92, 448: 1190,
	}
	for cpus, w := range want {
		if got := ReservedCPU(cpus); got != w {
			t.Errorf("ReservedCPU(%d) = %d, want %d", cpus, got, w)
		}
	}
}

func TestReservedMemoryMiB(t *testing.T) {
	for maxPods, want := range map[int]int{4: 299, 29: 574, 58: 893, 110: 1465, 737: 8362} {
		if got := ReservedMemoryMiB(maxPods); got != want {
			t.Errorf("ReservedMemoryMiB(%d) = %d, want %d", maxPods, got, want)
		}
	}
}

// TestBuildGolden checks Marshal(Build(...)) against what bootstrap.sh wrote, as
// JSON values. The one expected difference is "readOnlyPort": 0, which the
// template sets and bootstrap.sh keeps: the upstream type's ReadOnlyPort is a
// non-pointer int32 with omitempty, and 0 is the kubelet's default (read-only
// port disabled), so the field is absent from Marshal's output and means the same.
func TestBuildGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Build(c.input())
			if err != nil {
				t.Fatal(err)
			}
			got, err := Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", "kubelet-config", c.name+".json"), got)

			want := decodeGeneric(t, readTestdata(t, filepath.Join(bootstrapDir, c.name, kubeletConfigPath)))
			if port, ok := want["readOnlyPort"]; !ok || port != json.Number("0") {
				t.Errorf(`bootstrap.sh output has readOnlyPort %v, want 0`, port)
			}
			delete(want, "readOnlyPort")
			if g := decodeGeneric(t, got); !reflect.DeepEqual(g, want) {
				t.Errorf("kubelet config differs from bootstrap.sh's:\ngot:  %v\nwant: %v", g, want)
			}
		})
	}
}

func decodeGeneric(t *testing.T, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestBuildKubeAPIQPS(t *testing.T) {
	withQPS := []byte(`{"kind":"KubeletConfiguration","apiVersion":"kubelet.config.k8s.io/v1beta1","kubeAPIQPS":5,"kubeAPIBurst":7}`)
	tests := []struct {
		version   string
		template  []byte
		wantQPS   any // nil: absent
		wantBurst any
	}{
		{"1.21.14", assets.KubeletConfig, nil, nil},
		{"1.22.0", assets.KubeletConfig, json.Number("10"), json.Number("20")},
		{"v1.24.17-eks-a1b2c3d", assets.KubeletConfig, json.Number("10"), json.Number("20")},
		{"1.26.15", assets.KubeletConfig, json.Number("10"), json.Number("20")},
		{"1.27.0", assets.KubeletConfig, nil, nil},
		{"1.32.9", assets.KubeletConfig, nil, nil},
		{"2.0.0", assets.KubeletConfig, nil, nil},
		{"1.23.1", withQPS, json.Number("5"), json.Number("7")},
		{"1.30.1", withQPS, json.Number("5"), json.Number("7")},
	}
	for _, tc := range tests {
		t.Run(tc.version, func(t *testing.T) {
			in := base.input()
			v, err := FindVersion(tc.version)
			if err != nil {
				t.Fatal(err)
			}
			in.KubeletVersion = v
			cfg, err := buildFromTemplate(tc.template, in)
			if err != nil {
				t.Fatal(err)
			}
			out, err := Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := decodeGeneric(t, out)
			if got["kubeAPIQPS"] != tc.wantQPS || got["kubeAPIBurst"] != tc.wantBurst {
				t.Errorf("kubeAPIQPS, kubeAPIBurst = %v, %v, want %v, %v", got["kubeAPIQPS"], got["kubeAPIBurst"], tc.wantQPS, tc.wantBurst)
			}
		})
	}
}

func TestBuildEdits(t *testing.T) {
	in := base.input()
	in.ReservedCgroups = false
	in.SetMaxPods = false
	in.MaxPods = 110
	in.CPUs = 96
	dns := []string{"fd00:10:96::a", "10.100.0.10"}
	in.ClusterDNS = dns
	cfg, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	dns[0] = "changed" // Build must not share the caller's slice
	if want := []string{"fd00:10:96::a", "10.100.0.10"}; !reflect.DeepEqual(cfg.ClusterDNS, want) {
		t.Errorf("ClusterDNS = %q, want %q", cfg.ClusterDNS, want)
	}
	if cfg.SystemReservedCgroup != "" || cfg.KubeReservedCgroup != "" {
		t.Errorf("reserved cgroups = %q, %q, want none", cfg.SystemReservedCgroup, cfg.KubeReservedCgroup)
	}
	if cfg.MaxPods != 0 {
		t.Errorf("MaxPods = %d, want 0 (unset)", cfg.MaxPods)
	}
	wantReserved := map[string]string{"cpu": "310m", "ephemeral-storage": "1Gi", "memory": "1465Mi"}
	if !reflect.DeepEqual(cfg.KubeReserved, wantReserved) {
		t.Errorf("KubeReserved = %v, want %v", cfg.KubeReserved, wantReserved)
	}
	if cfg.CgroupDriver != "systemd" || cfg.ProviderID != providerUSW2 {
		t.Errorf("CgroupDriver, ProviderID = %q, %q", cfg.CgroupDriver, cfg.ProviderID)
	}
}

// TestBuildReplacesTemplateMaps checks that evictionHard and kubeReserved are
// replaced as a whole, as bootstrap.sh's jq assignments do.
func TestBuildReplacesTemplateMaps(t *testing.T) {
	template := []byte(`{"evictionHard":{"imagefs.available":"15%"},"kubeReserved":{"pid":"100"},"maxPods":17}`)
	in := base.input()
	in.SetMaxPods = false
	cfg, err := buildFromTemplate(template, in)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.EvictionHard, EvictionHard()) {
		t.Errorf("EvictionHard = %v, want %v", cfg.EvictionHard, EvictionHard())
	}
	if _, ok := cfg.KubeReserved["pid"]; ok {
		t.Errorf("KubeReserved kept the template's pid: %v", cfg.KubeReserved)
	}
	if cfg.MaxPods != 17 {
		t.Errorf("MaxPods = %d, want the template's 17 when SetMaxPods is false", cfg.MaxPods)
	}
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(*Input)
		template string
		wantErr  string
	}{
		{"no cpus", func(in *Input) { in.CPUs = 0 }, "", "cpus: must be at least 1, got 0"},
		{"no max pods", func(in *Input) { in.MaxPods = -3 }, "", "maxPods: must be at least 1, got -3"},
		{"no dns", func(in *Input) { in.ClusterDNS = nil }, "", "clusterDNS: at least one address is required"},
		{
			"bad dns", func(in *Input) { in.ClusterDNS = []string{"10.100.0.10", " 10.100.0.11"} }, "",
			`clusterDNS[1]: " 10.100.0.11" is not an IP address`,
		},
		{"no provider id", func(in *Input) { in.ProviderID = "" }, "", "providerID: must not be empty"},
		{"no version", func(in *Input) { in.KubeletVersion = Version{} }, "", "kubeletVersion: must be set"},
		{
			"all at once", func(in *Input) { *in = Input{} }, "",
			"clusterDNS: at least one address is required\nmaxPods: must be at least 1, got 0\ncpus: must be at least 1, got 0\n" +
				"providerID: must not be empty\nkubeletVersion: must be set",
		},
		{
			"unknown template field", func(*Input) {}, `{"maxPod": 3}`,
			`decoding kubelet config template: json: unknown field "maxPod"`,
		},
		{"bad template", func(*Input) {}, `{`, "decoding kubelet config template: unexpected EOF"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := base.input()
			tc.edit(&in)
			template := assets.KubeletConfig
			if tc.template != "" {
				template = []byte(tc.template)
			}
			cfg, err := buildFromTemplate(template, in)
			if err == nil {
				t.Fatalf("buildFromTemplate = %+v, want error", cfg)
			}
			if err.Error() != tc.wantErr {
				t.Errorf("error = %q, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestTemplateConfigIsTheTemplate: the generated value is what decoding
// assets.KubeletConfig strictly gives, and every call returns a value of its own.
func TestTemplateConfigIsTheTemplate(t *testing.T) {
	want := &KubeletConfiguration{}
	dec := json.NewDecoder(bytes.NewReader(assets.KubeletConfig))
	dec.DisallowUnknownFields()
	if err := dec.Decode(want); err != nil {
		t.Fatal(err)
	}
	got := templateConfig()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("templateConfig() differs from the decoded template:\n%+v\n%+v", got, want)
	}
	got.FeatureGates["X"] = true
	*got.SerializeImagePulls = true
	got.TLSCipherSuites[0] = "changed"
	if again := templateConfig(); !reflect.DeepEqual(again, want) {
		t.Errorf("a change to one value shows in the next: %+v", again)
	}
}

// buildFromTemplate decodes template, a kubelet-config.json, strictly (unknown
// fields are an error) and applies bootstrap.sh's containerd-path edits, in
// bootstrap.sh's order:
//   - clusterDNS = in.ClusterDNS;
//   - for kubelets 1.22.0 <= v < 1.27.0, kubeAPIQPS 10 and kubeAPIBurst 20 unless
//     the template sets them;
//   - evictionHard replaced by EvictionHard();
//   - kubeReserved replaced by {cpu: ReservedCPU(CPUs)m, ephemeral-storage: 1Gi,
//     memory: ReservedMemoryMiB(MaxPods)Mi};
//   - maxPods = in.MaxPods if in.SetMaxPods;
//   - providerID = in.ProviderID;
//   - cgroupDriver = systemd, and the reserved cgroups if in.ReservedCgroups.
//
// Every invalid input field is reported, joined in one error.
func buildFromTemplate(template []byte, in Input) (*KubeletConfiguration, error) {
	version, err := in.validate()
	if err != nil {
		return nil, err
	}
	cfg := &KubeletConfiguration{}
	dec := json.NewDecoder(bytes.NewReader(template))
	dec.DisallowUnknownFields()
	if err := dec.Decode(cfg); err != nil {
		return nil, fmt.Errorf("decoding kubelet config template: %w", err)
	}
	return applyEdits(cfg, in, version), nil
}

func TestBuildShutdown(t *testing.T) {
	in := Input{
		ClusterDNS: []string{"10.100.0.10"}, MaxPods: 29, CPUs: 2, ProviderID: "aws:///us-west-2a/i-1", KubeletVersion: Version{1, 32, 9},
		ShutdownGracePeriod: 150 * time.Second, ShutdownGracePeriodCriticalPods: 30 * time.Second,
	}
	cfg, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"shutdownGracePeriod": "2m30s"`, `"shutdownGracePeriodCriticalPods": "30s"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("kubelet-config.json lacks %s:\n%s", want, b)
		}
	}
	in.ShutdownGracePeriod, in.ShutdownGracePeriodCriticalPods = 0, 0
	cfg, _ = Build(in)
	if b, _ := Marshal(cfg); strings.Contains(string(b), "shutdownGracePeriod") {
		t.Errorf("graceful shutdown off, but the config has it:\n%s", b)
	}
	in.ShutdownGracePeriod, in.ShutdownGracePeriodCriticalPods = 10*time.Second, 20*time.Second
	if _, err := Build(in); err == nil || !strings.Contains(err.Error(), "shutdownGracePeriodCriticalPods: 20s exceeds shutdownGracePeriod 10s") {
		t.Errorf("err = %v", err)
	}
}
