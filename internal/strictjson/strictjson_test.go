package strictjson

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestCheck: what the pass refuses, each with its place, and what it lets
// through to encoding/json as it is.
func TestCheck(t *testing.T) {
	deep := strings.Repeat("[", 65) + strings.Repeat("]", 65)
	for _, tc := range []struct {
		name, doc string
		lim       Limits
		want      string // "" for no error
	}{
		{"an identity document", `{"region": "us-west-2", "instanceType": "m5.large", "devpayProductCodes": null, "n": [1, 2.5, true]}`, Limits{}, ""},
		{"a key twice", `{"instanceType": "m5.large", "region": "us-west-2", "instanceType": "p5.48xlarge"}`, Limits{}, "instanceType: a key given twice"},
		{"a key twice in another case", `{"region": "us-west-2", "Region": "us-east-1"}`, Limits{}, `Region: a key given twice (also as "region"; encoding/json takes them for one field)`},
		{"a key twice, escaped", `{"region": "a", "\u0072egion": "b"}`, Limits{}, "region: a key given twice"},
		{"nested", `{"cluster": {"name": "a", "kubernetesNetworkConfig": {"ipFamily": "ipv4", "ipFamily": "ipv6"}}}`, Limits{}, "cluster.kubernetesNetworkConfig.ipFamily: a key given twice"},
		{"in an array", `{"a": [{"x": 1}, {"x": 1, "x": 2}]}`, Limits{}, "a[1].x: a key given twice"},
		{"the same key in two objects", `{"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 1}, {"x": 1}]}`, Limits{}, ""},
		{"a key and a value alike", `{"x": "x", "y": ["x", "x"]}`, Limits{}, ""},
		{"64 levels", strings.Repeat("[", 64) + strings.Repeat("]", 64), Limits{}, ""},
		{"65 levels", deep, Limits{}, "[0][0][0]"},
		{"too many bytes", `{"a": "` + strings.Repeat("x", 100) + `"}`, Limits{Bytes: 64}, "109 bytes, more than the 64 allowed"},
		{"too many values", `[1, 2, 3, 4]`, Limits{Values: 4}, "[3]: more than 4 values"},
		{"as many values as allowed", `[1, 2, 3]`, Limits{Values: 4}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check([]byte(tc.doc), tc.lim)
			var e *Error
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Check: %v", err)
			case tc.want != "" && (!errors.As(err, &e) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Check: %v; want an *Error with %q", err, tc.want)
			}
		})
	}
}

// TestSyntaxIsEncodingJSONs: a document that is not JSON is encoding/json's
// error, and a document that is decodes as json.Unmarshal decodes it.
func TestSyntaxIsEncodingJSONs(t *testing.T) {
	for _, doc := range []string{`{"a": }`, `{"a": 1`, `{"a" 1}`, `[1,]`, `nul`, ``, `{} {}`, `1 2`} {
		if err := Check([]byte(doc), Limits{}); err == nil {
			t.Errorf("Check(%q): no error", doc)
		}
	}
	doc := []byte(`{"Region": "us-west-2", "list": [1, {"b": null}], "n": 12345678901234567890}`)
	var got, want any
	if err := Unmarshal(doc, &got, Limits{Bytes: 1 << 10, Values: 10}); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(doc, &want); err != nil {
		t.Fatal(err)
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("Unmarshal: %s, encoding/json: %s", g, w)
	}
}
