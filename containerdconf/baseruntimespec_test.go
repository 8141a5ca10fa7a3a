package containerdconf

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/assets"
)

func decodeSpec(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return m
}

func TestBaseRuntimeSpecDefault(t *testing.T) {
	for _, overlay := range []map[string]any{nil, {}} {
		got, err := BaseRuntimeSpec(overlay)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, assets.BaseRuntimeSpec) {
			t.Errorf("overlay %v: the default is not the embedded file byte for byte", overlay)
		}
	}
	// The embedded file is already in the output form: re-encoding changes nothing.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(decodeSpec(t, assets.BaseRuntimeSpec)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), assets.BaseRuntimeSpec) {
		t.Errorf("assets/base-runtime-spec.json is not in sorted, two-space form; want:\n%s", buf.Bytes())
	}
	spec := decodeSpec(t, assets.BaseRuntimeSpec)
	rl, _ := dig(spec, "process", "rlimits")
	want := []any{map[string]any{"type": "RLIMIT_NOFILE", "soft": json.Number("65536"), "hard": json.Number("1048576")}}
	if !reflect.DeepEqual(rl, want) {
		t.Errorf("rlimits = %v, want %v", rl, want)
	}
}

// TestBaseRuntimeSpecMerge follows nodeadm's e2e case containerd-base-runtime-spec:
// a new key is added, a list (rlimits) replaces the default's, everything else stays.
func TestBaseRuntimeSpecMerge(t *testing.T) {
	overlay := map[string]any{
		"foo": "bar",
		"process": map[string]any{
			"rlimits": []any{map[string]any{"type": "RLIMIT_NOFILE", "soft": 12345, "hard": 12345}},
		},
		"linux":       map[string]any{"sysctl": map[string]any{"net.ipv4.ping_group_range": "0 2147483647"}},
		"annotations": map[string]any{"note": "a & b <c>"},
	}
	out, err := BaseRuntimeSpec(overlay)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(out, []byte("}\n")) || bytes.HasSuffix(out, []byte("\n\n")) {
		t.Errorf("want exactly one final newline")
	}
	if !bytes.Contains(out, []byte(`"a & b <c>"`)) {
		t.Errorf("HTML characters escaped:\n%s", out)
	}
	got := decodeSpec(t, out)
	def := decodeSpec(t, assets.BaseRuntimeSpec)
	checks := []struct {
		path []string
		want any
	}{
		{[]string{"foo"}, "bar"},
		{[]string{"process", "rlimits"}, []any{map[string]any{"type": "RLIMIT_NOFILE", "soft": json.Number("12345"), "hard": json.Number("12345")}}},
		{[]string{"linux", "sysctl", "net.ipv4.ping_group_range"}, "0 2147483647"},
		{[]string{"annotations", "note"}, "a & b <c>"},
	}
	for _, keep := range [][]string{{"ociVersion"}, {"mounts"}, {"root"}, {"process", "capabilities"}, {"process", "cwd"}, {"process", "noNewPrivileges"}, {"process", "user"}, {"linux", "maskedPaths"}, {"linux", "readonlyPaths"}, {"linux", "namespaces"}, {"linux", "resources"}} {
		v, _ := dig(def, keep...)
		checks = append(checks, struct {
			path []string
			want any
		}{keep, v})
	}
	for _, c := range checks {
		if v, _ := dig(got, c.path...); !reflect.DeepEqual(v, c.want) {
			t.Errorf("%s = %v, want %v", strings.Join(c.path, "."), v, c.want)
		}
	}
	again, _ := BaseRuntimeSpec(overlay)
	if !bytes.Equal(again, out) {
		t.Errorf("a second render differs")
	}
	if again, _ := BaseRuntimeSpec(nil); !bytes.Equal(again, assets.BaseRuntimeSpec) {
		t.Errorf("a merge changed the embedded default")
	}
}

func TestBaseRuntimeSpecErrors(t *testing.T) {
	tests := []struct {
		name    string
		overlay map[string]any
		want    string
	}{
		{"ociVersion not a string", map[string]any{"ociVersion": 1}, `spec.containerd.baseRuntimeSpec: ociVersion 1: want a string such as "1.1.0"`},
		{"ociVersion removed", map[string]any{"ociVersion": nil}, "spec.containerd.baseRuntimeSpec: ociVersion <nil>"},
		{"value JSON cannot hold", map[string]any{"x": func() {}}, "spec.containerd.baseRuntimeSpec: json: unsupported type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := BaseRuntimeSpec(tc.overlay)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
			if out != nil {
				t.Errorf("wrote %q with the error", out)
			}
		})
	}
}

// dig returns the value at path in a decoded TOML tree.
func dig(t map[string]any, path ...string) (any, bool) {
	var v any = t
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}
