package kubeletconf

// These tests hold the generated copy of the kubelet's configuration types
// (zz_generated_types.go) and the leaf types of leaf.go to the upstream types they
// stand for: the same JSON must decode into both, or fail in both, and encode to the
// same bytes.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logsapi "k8s.io/component-base/logs/api/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/eksboot/eksboot/assets"
)

// sample returns a decoded-JSON value for upstream type t with every field set
// (n varies the values), so that decoding it exercises every field of the copy.
func sample(t reflect.Type, n int) any {
	switch t {
	case reflect.TypeFor[metav1.Duration]():
		return fmt.Sprintf("%dm30s", n)
	case reflect.TypeFor[metav1.Time]():
		return fmt.Sprintf("2024-01-0%dT03:04:05Z", n%9+1)
	case reflect.TypeFor[resource.Quantity](), reflect.TypeFor[resource.QuantityValue]():
		return fmt.Sprintf("%dGi", n)
	case reflect.TypeFor[logsapi.TimeOrMetaDuration]():
		if n%2 == 0 {
			return fmt.Sprintf("%ds", n)
		}
		return float64(n) * 1e9
	}
	switch t.Kind() {
	case reflect.Pointer:
		return sample(t.Elem(), n)
	case reflect.Bool:
		return n%2 == 1
	case reflect.String:
		return fmt.Sprintf("s%d", n)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(n)
	case reflect.Float32, reflect.Float64:
		return float64(n) + 0.5
	case reflect.Slice:
		return []any{sample(t.Elem(), n+1), sample(t.Elem(), n+2)}
	case reflect.Map:
		return map[string]any{"a": sample(t.Elem(), n+1), "b": sample(t.Elem(), n+2)}
	case reflect.Struct:
		obj := map[string]any{}
		fillStruct(obj, t, n)
		return obj
	}
	panic(fmt.Sprintf("sample: no value for %s", t))
}

// fillStruct sets every JSON field of struct type t in obj, inlining embedded
// structs as encoding/json does.
func fillStruct(obj map[string]any, t reflect.Type, n int) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if tag == "-" || !f.IsExported() {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			fillStruct(obj, f.Type, n)
			continue
		}
		if name == "" {
			name = f.Name
		}
		obj[name] = sample(f.Type, n+i)
	}
}

// decodeBoth decodes data strictly into the upstream KubeletConfiguration and into
// the copy, and returns both encoded by marshalStruct; the errors must agree.
func decodeBoth(t *testing.T, data []byte) (upstream, local []byte, ok bool) {
	t.Helper()
	var up kubeletv1beta1.KubeletConfiguration
	var lo KubeletConfiguration
	upErr, loErr := decodeStrict(data, &up), decodeStrict(data, &lo)
	if (upErr == nil) != (loErr == nil) {
		t.Fatalf("upstream error %v, copy error %v, for\n%s", upErr, loErr, data)
	}
	if upErr != nil {
		return nil, nil, false
	}
	upOut, err := marshalStruct(reflect.ValueOf(up))
	if err != nil {
		t.Fatal(err)
	}
	loOut, err := marshalStruct(reflect.ValueOf(lo))
	if err != nil {
		t.Fatal(err)
	}
	return upOut, loOut, true
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// TestCopyMatchesUpstream decodes configurations with every field of every nested
// type set, the AMI template and the golden outputs into the upstream type and the
// copy, and compares what Marshal writes for each.
func TestCopyMatchesUpstream(t *testing.T) {
	inputs := map[string][]byte{"template": assets.KubeletConfig}
	for n := range 3 {
		all := sample(reflect.TypeFor[kubeletv1beta1.KubeletConfiguration](), n).(map[string]any)
		data, err := json.Marshal(all)
		if err != nil {
			t.Fatal(err)
		}
		inputs[fmt.Sprintf("every field %d", n)] = data
	}
	golden, err := filepath.Glob("../testdata/golden/*/etc/kubernetes/kubelet/kubelet-config.json")
	if err != nil || len(golden) == 0 {
		t.Fatalf("no golden kubelet-config.json (%v)", err)
	}
	for _, p := range golden {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		inputs[p] = data
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			up, lo, ok := decodeBoth(t, data)
			if !ok {
				t.Fatalf("neither type accepts the input:\n%s", data)
			}
			if !bytes.Equal(up, lo) {
				t.Errorf("the copy encodes differently from upstream:\nupstream %s\ncopy     %s", up, lo)
			}
		})
	}
}

// TestCopyRejectsWhatUpstreamRejects: unknown fields, wrong JSON types and bad leaf
// values fail in both.
func TestCopyRejectsWhatUpstreamRejects(t *testing.T) {
	for _, in := range []string{
		`{"maxPodz": 1}`,
		`{"maxPods": "110"}`,
		`{"maxPods": 1.5}`,
		`{"authentication": {"webhook": {"cacheTTL": 120}}}`,
		`{"shutdownGracePeriod": "ninety seconds"}`,
		`{"registerWithTaints": [{"key": "k", "effect": "NoSchedule", "timeAdded": "yesterday"}]}`,
		`{"reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gx"}}]}`,
		`{"logging": {"flushFrequency": "5 seconds"}}`,
		`{"logging": {"flushFrequency": 1.5}}`,
		`{"logging": {"vmodule": [{"filePattern": "x", "verbosity": -1}]}}`,
		`{"featureGates": {"A": "true"}}`,
		`{"evictionHard": ["memory.available<100Mi"]}`,
		`{"tracing": {"samplingRatePerMillion": 1e12}}`,
	} {
		t.Run(in, func(t *testing.T) {
			if _, _, ok := decodeBoth(t, []byte(in)); ok {
				t.Errorf("both types accept %s", in)
			}
		})
	}
}

// TestLeafTypes compares each leaf type with its upstream type on the edge cases of
// its encoding: same acceptance, same output (for Quantity, the same quantity).
func TestLeafTypes(t *testing.T) {
	check := func(t *testing.T, in string, up, lo any, same func(upOut, loOut []byte) bool) {
		t.Helper()
		upErr, loErr := json.Unmarshal([]byte(in), up), json.Unmarshal([]byte(in), lo)
		if (upErr == nil) != (loErr == nil) {
			t.Fatalf("%s: upstream error %v, copy error %v", in, upErr, loErr)
		}
		if upErr != nil {
			return
		}
		upOut, err1 := json.Marshal(up)
		loOut, err2 := json.Marshal(lo)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: marshal errors %v, %v", in, err1, err2)
		}
		if !same(upOut, loOut) {
			t.Errorf("%s: upstream writes %s, copy writes %s", in, upOut, loOut)
		}
	}
	equal := func(a, b []byte) bool { return bytes.Equal(a, b) }

	for _, in := range []string{`"90s"`, `"1h2m3.5s"`, `"0"`, `"-5m"`, `""`, `"5"`, `90`, `null`, `"1y"`, `true`} {
		check(t, in, &metav1.Duration{}, &Duration{}, equal)
	}
	for _, in := range []string{`"2024-01-02T03:04:05Z"`, `"2024-01-02T03:04:05.123+02:00"`, `null`, `"2024-01-02"`, `"yesterday"`, `0`} {
		check(t, in, &metav1.Time{}, &Time{}, equal)
	}
	for _, in := range []string{`"5s"`, `5000000000`, `0`, `"0s"`, `"5"`, `1.5`, `"1.5s"`, `null`, `true`} {
		check(t, in, &logsapi.TimeOrMetaDuration{}, &TimeOrMetaDuration{}, equal)
	}
	sameQuantity := func(upOut, loOut []byte) bool {
		var a, b resource.Quantity
		if json.Unmarshal(upOut, &a) != nil || json.Unmarshal(loOut, &b) != nil {
			return false
		}
		return a.Cmp(b) == 0
	}
	for _, in := range quantityInputs {
		check(t, in, &resource.Quantity{}, &Quantity{}, sameQuantity)
	}
}

// quantityInputs are edge cases of resource.ParseQuantity's grammar; they also seed
// FuzzQuantity.
var quantityInputs = []string{
	`"1Gi"`, `"1024Mi"`, `"500m"`, `"0.5"`, `"1e3"`, `"1E-3"`, `"+1k"`, `"-2M"`, `"1."`, `".5"`, `"5Ki"`,
	`"1.5Ei"`, `" 1Gi "`, `"1 Gi"`, `"1gi"`, `"1KI"`, `"Gi"`, `"."`, `""`, `"1e"`, `"1e+"`, `"1ee3"`, `"1.2.3"`,
	`"0x10"`, `"1Gi\u0020"`, `12`, `1.25`, `-3`, `1e3`, `null`, `true`, `"null"`, `"1m1"`, `"1i"`, `"++1"`,
}

// FuzzQuantity checks that Quantity accepts exactly what resource.Quantity accepts,
// as a JSON string, and reads the same quantity.
func FuzzQuantity(f *testing.F) {
	for _, in := range quantityInputs {
		var s string
		if json.Unmarshal([]byte(in), &s) == nil {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		if hugeExponent(s) {
			return // upstream's parse takes minutes (for "1E-70070000", 38 s)
		}
		in, err := json.Marshal(s)
		if err != nil {
			return
		}
		var up resource.Quantity
		var lo Quantity
		upErr, loErr := json.Unmarshal(in, &up), json.Unmarshal(in, &lo)
		if (upErr == nil) != (loErr == nil) {
			t.Fatalf("%s: upstream error %v, copy error %v", in, upErr, loErr)
		}
		if upErr != nil {
			return
		}
		back, err := resource.ParseQuantity(lo.String())
		if err != nil || back.Cmp(up) != 0 {
			t.Fatalf("%s: copy keeps %q, upstream reads %s (%v)", in, lo.String(), up.String(), err)
		}
		// The value of a size, where upstream's int64 holds it (beyond, upstream
		// wraps or saturates by its own rules; QuantityValue saturates). Upstream's
		// Value is not asked of a zero or of a value under 10^-9: with an exponent
		// such as E1000000000000000000 it computes for minutes.
		v, ok := QuantityValue(lo.String())
		switch f := up.AsApproximateFloat64(); {
		case up.Sign() == 0:
			if !ok || v != 0 {
				t.Fatalf("%s: QuantityValue = %d, %v; want 0", in, v, ok)
			}
		case f >= 1e-9 && f < 1e18:
			if !ok || v != up.Value() {
				t.Fatalf("%s: QuantityValue = %d, %v; upstream Value %d", in, v, ok, up.Value())
			}
		}
	})
}

// hugeExponent reports whether s ends in an exponent beyond ±10000, which the
// fuzz target leaves out: resource.ParseQuantity spends minutes on one such input,
// and Quantity's grammar check does not depend on the exponent's size.
func hugeExponent(s string) bool {
	i := strings.LastIndexAny(s, "eE")
	if i < 0 {
		return false
	}
	exp, err := strconv.ParseInt(strings.TrimLeft(s[i+1:], "+-"), 10, 64)
	return (err != nil && len(s)-i > 6) || exp > 10000
}

// TestQuantityValue: the values of the forms eviction thresholds take, and
// refusals, against upstream's Value.
func TestQuantityValue(t *testing.T) {
	for _, s := range []string{
		"1Gi", "100Mi", "1.1k", "500m", "0.5", "1e3", "1E-3", "+1k", "1.", ".5", "5Ki",
		"1.5Gi", "Gi", ".", "+", "1n", "999u", "3T", "2P", "1.25E", "0", "10e-9", "7e-40", "1Ei",
	} {
		up := resource.MustParse(s)
		if v, ok := QuantityValue(s); !ok || v != up.Value() {
			t.Errorf("QuantityValue(%q) = %d, %v; upstream Value %d", s, v, ok, up.Value())
		}
	}
	for _, s := range []string{"", "1gi", "1 Gi", "x", "1e", "0x10", "-2M", "-1e-10"} {
		if _, ok := QuantityValue(s); ok {
			t.Errorf("QuantityValue(%q) accepted it", s)
		}
	}
	if v, _ := QuantityValue("1e40"); v != math.MaxInt64 {
		t.Errorf("QuantityValue(1e40) = %d, want saturation", v)
	}
}
