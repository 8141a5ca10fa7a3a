package kubeletconf

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/assets"
)

// decodeTemplate decodes the AMI template as it is, without bootstrap.sh's edits.
func decodeTemplate(t *testing.T) *KubeletConfiguration {
	t.Helper()
	cfg := &KubeletConfiguration{}
	if err := json.Unmarshal(assets.KubeletConfig, cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func compact(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestMarshalPrunesZeroValues checks that the template's configuration is written
// without the zero values encoding/json adds, but with its explicit false values.
func TestMarshalPrunesZeroValues(t *testing.T) {
	cfg := decodeTemplate(t)
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The premise: encoding/json does write zero durations and logging.
	if !strings.Contains(string(raw), `"0s"`) || !strings.Contains(string(raw), `"logging":`) {
		t.Fatalf("encoding/json output lacks the zero values this test is about: %s", raw)
	}

	out, err := Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := compact(t, out)
	for _, absent := range []string{`"0s"`, `"logging"`, `"syncFrequency"`, `"enableServer"`, `null`} {
		if strings.Contains(got, absent) {
			t.Errorf("Marshal output contains %s: %s", absent, got)
		}
	}
	for _, present := range []string{
		`"anonymous":{"enabled":false}`,
		`"serializeImagePulls":false`,
		`"webhook":{"enabled":true,"cacheTTL":"2m0s"}`,
		`"featureGates":{"RotateKubeletServerCertificate":true}`,
	} {
		if !strings.Contains(got, present) {
			t.Errorf("Marshal output lacks %s: %s", present, got)
		}
	}
	if !strings.HasPrefix(got, `{"kind":"KubeletConfiguration","apiVersion":"kubelet.config.k8s.io/v1beta1",`) {
		t.Errorf("Marshal output does not start with kind and apiVersion: %s", got)
	}
}

// TestMarshalRoundTrip checks, for the golden cases and for configurations with
// pointers to zero values and structs inside slices, that Marshal's output
// decodes to the same configuration and only leaves out what encoding/json
// writes as zero.
func TestMarshalRoundTrip(t *testing.T) {
	zero, no := int32(0), false
	extra := decodeTemplate(t)
	extra.KubeAPIQPS = &zero
	extra.EnableServer = &no
	extra.ShutdownGracePeriodByPodPriority = []ShutdownGracePeriodByPodPriority{
		{Priority: 0, ShutdownGracePeriodSeconds: 30},
		{Priority: 100000, ShutdownGracePeriodSeconds: 0},
	}
	extra.ShutdownGracePeriod = Duration{Duration: 90 * time.Second}
	extra.EvictionHard = map[string]string{"memory.available": "<100Mi&>"}

	configs := map[string]*KubeletConfiguration{"extra": extra, "template": decodeTemplate(t)}
	for _, c := range goldenCases {
		cfg, err := Build(c.input())
		if err != nil {
			t.Fatal(err)
		}
		configs[c.name] = cfg
	}
	for name, cfg := range configs {
		t.Run(name, func(t *testing.T) {
			out, err := Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			back := &KubeletConfiguration{}
			dec := json.NewDecoder(bytes.NewReader(out))
			dec.DisallowUnknownFields()
			if err := dec.Decode(back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, cfg) {
				t.Errorf("Marshal output decodes to a different configuration:\n%s", out)
			}

			raw, err := json.Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			checkSubset(t, "$", decodeGeneric(t, out), decodeGeneric(t, raw))
		})
	}
}

// checkSubset checks that every value of got equals want's, except objects,
// which are compared key by key, and that every key of want missing from got
// holds a zero value.
func checkSubset(t *testing.T, path string, got, want any) {
	t.Helper()
	gm, gok := got.(map[string]any)
	wm, wok := want.(map[string]any)
	if !gok || !wok {
		if ga, ok := got.([]any); ok {
			wa, _ := want.([]any)
			if len(ga) != len(wa) {
				t.Errorf("%s: got %v, want %v", path, got, want)
				return
			}
			for i := range ga {
				checkSubset(t, path+"[]", ga[i], wa[i])
			}
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %v, encoding/json wrote %v", path, got, want)
		}
		return
	}
	for k, wv := range wm {
		gv, ok := gm[k]
		if !ok {
			if !isZeroJSON(wv) {
				t.Errorf("%s.%s: left out, but encoding/json wrote non-zero %v", path, k, wv)
			}
			continue
		}
		checkSubset(t, path+"."+k, gv, wv)
	}
	for k := range gm {
		if _, ok := wm[k]; !ok {
			t.Errorf("%s.%s: not written by encoding/json", path, k)
		}
	}
}

// isZeroJSON reports whether v is how encoding/json writes a zero value.
func isZeroJSON(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool:
		return !v
	case json.Number:
		return v == "0"
	case string:
		return v == "" || v == "0s" || v == "0"
	case []any:
		return len(v) == 0
	case map[string]any:
		for _, e := range v {
			if !isZeroJSON(e) {
				return false
			}
		}
		return true
	}
	return false
}

func TestMarshalFormat(t *testing.T) {
	cfg := decodeTemplate(t)
	cfg.FeatureGates = map[string]bool{"Zeta": true, "Alpha": false, "Mid": true}
	cfg.EvictionHard = map[string]string{"memory.available": "<100Mi"}
	first, err := Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, err := Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, first) {
			t.Fatalf("Marshal is not deterministic:\n%s\n%s", first, again)
		}
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, first, "", "  "); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(indented.Bytes(), first) || !bytes.HasSuffix(first, []byte("}\n")) {
		t.Errorf("Marshal output is not 2-space indented JSON ending in a newline:\n%s", first)
	}
	s := string(first)
	if !strings.Contains(s, `"Alpha": false,`) || strings.Index(s, `"Alpha"`) > strings.Index(s, `"Zeta"`) {
		t.Errorf("feature gates are not sorted:\n%s", s)
	}
	if !strings.Contains(s, `"memory.available": "<100Mi"`) {
		t.Errorf("Marshal escaped HTML characters:\n%s", s)
	}
}

func TestMarshalNil(t *testing.T) {
	if _, err := Marshal(nil); err == nil || err.Error() != "kubelet configuration is nil" {
		t.Errorf("Marshal(nil) error = %v", err)
	}
}
