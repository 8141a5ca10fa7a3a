package yamljson

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// bombs are documents whose aliases or merge keys expand them past a bound, each
// with the bound it passes. They expand to tens of MiB at most, so that a
// converter without its bounds fails the test instead of the machine.
func bombs() []struct {
	name string
	doc  string
	want Bound
} {
	aliases := func(name string, n int) string { return strings.TrimSuffix(strings.Repeat("*"+name+", ", n), ", ") }
	long := strings.Repeat("x", 35_000)
	ones := strings.TrimSuffix(strings.Repeat("1, ", 2000), ", ")
	var laughs strings.Builder
	laughs.WriteString("l0: &l0 [a, b, c, d, e, f, g, h, i, j]\n")
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&laughs, "l%d: &l%d [%s]\n", i, i, aliases(fmt.Sprintf("l%d", i-1), 10))
	}
	var keys strings.Builder
	keys.WriteString("s: &s " + long + "\nm:\n")
	for i := range 200 {
		fmt.Fprintf(&keys, "  ? *s\n  : %d\n", i)
	}
	var merges strings.Builder
	merges.WriteString("s: &s " + long + "\nm: &m {" + strings.TrimSuffix(strings.Repeat("k: *s, ", 1), ", "))
	for i := range 9 {
		fmt.Fprintf(&merges, ", k%d: *s", i)
	}
	merges.WriteString("}\nlist:\n")
	for range 100 {
		merges.WriteString("  - <<: *m\n")
	}
	return []struct {
		name string
		doc  string
		want Bound
	}{
		{"a 35 KB string aliased 1,000 times through a list", "a: &a " + long + "\nb: &b [" + aliases("a", 10) + "]\nc: [" + aliases("b", 100) + "]\n", BoundBytes},
		{"2,000 numbers aliased 60 times", "a: &a [" + ones + "]\nb: [" + aliases("a", 60) + "]\n", BoundNodes},
		{"a billion laughs, 10 to the 7th", laughs.String(), BoundAliases},
		{"a 35 KB string as 200 map keys", keys.String(), BoundBytes},
		{"100 merges of 10 aliases of a 35 KB string", merges.String(), BoundBytes},
	}
}

// TestExpansionIsBoundedWhileConverting: each bomb is refused with the bound it
// passes, by ToJSON and by CheckExpansion, and ToJSON stops while it expands it:
// it allocates a few MiB, not the tens of MiB the document expands to.
func TestExpansionIsBoundedWhileConverting(t *testing.T) {
	for _, tc := range bombs() {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			j, err := ToJSON([]byte(tc.doc))
			runtime.ReadMemStats(&after)
			var ee *ExpansionError
			if !errors.As(err, &ee) || ee.Bound != tc.want {
				t.Fatalf("ToJSON of %d bytes: %d bytes of JSON, error %v; want the bound %d", len(tc.doc), len(j), err, tc.want)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
				t.Errorf("ToJSON allocated %d MiB before refusing the document; want it stopped within the bound", alloc>>20)
			}
			if tc.want != BoundAliases { // v2's rule about aliasing is ToJSON's alone
				if err := CheckExpansion([]byte(tc.doc)); !errors.As(err, &ee) || ee.Bound != tc.want {
					t.Errorf("CheckExpansion: %v; want the bound %d", err, tc.want)
				}
			}
			t.Logf("%d bytes: %v", len(tc.doc), err)
		})
	}
}

// TestWithinTheBoundsConverts: documents just within the bounds convert, their
// JSON no larger than MaxBytes, and CheckExpansion lets them through.
func TestWithinTheBoundsConverts(t *testing.T) {
	long := strings.Repeat("x", 35_000)
	aliases := func(name string, n int) string { return strings.TrimSuffix(strings.Repeat("*"+name+", ", n), ", ") }
	ones := strings.TrimSuffix(strings.Repeat("1, ", 1000), ", ")
	for _, doc := range []string{
		"a: &a " + long + "\nb: &b [" + aliases("a", 10) + "]\nc: [" + aliases("b", 10) + "]\n", // 111 strings of 35 KB
		"a: &a [" + ones + "]\nb: [" + aliases("a", 98) + "]\n",
	} {
		if err := CheckExpansion([]byte(doc)); err != nil {
			t.Errorf("CheckExpansion: %v", err)
		}
		j, err := ToJSON([]byte(doc))
		if err != nil {
			t.Fatalf("ToJSON of %d bytes: %v", len(doc), err)
		}
		if len(j) > MaxBytes {
			t.Errorf("ToJSON made %d bytes of JSON, more than MaxBytes", len(j))
		}
	}
}

// TestJSONStringLenIsEncodingJSONs: the bytes counted for a string are those
// encoding/json writes, escapes included, so that MaxBytes bounds the JSON made.
func TestJSONStringLenIsEncodingJSONs(t *testing.T) {
	for _, s := range []string{
		"", "plain", `"quoted" \ back`, "\x00\x01\n\r\t\b\f\x1f\x7f", "<a href='x'>&amp;</a>",
		"é ü 日本 🙂", "\u2028\u2029", "bad \xff\xfe utf-8 \xe2\x82", strings.Repeat("\x00", 100),
	} {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonStringLen(s); got != len(b) {
			t.Errorf("jsonStringLen(%q) = %d, encoding/json writes %d bytes: %s", s, got, len(b), b)
		}
	}
}

// TestKeyCollisions: two keys that are one YAML value (0x10 and 16) are one key,
// the later value kept, as sigs.k8s.io/yaml keeps it; two keys that are different
// values with one name in JSON (16 and "16") are an error, where sigs.k8s.io/yaml
// keeps one of them at random.
func TestKeyCollisions(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"0x10: a\n16: b\n", `{"16":"b"}`},
		{"16: a\n0x10: b\n", `{"16":"b"}`},
		{"yes: a\ntrue: b\n", `{"true":"b"}`},
		{"0b11: a\n3: b\n", `{"3":"b"}`},
		{"a: 1\na: 2\n", `{"a":2}`},
	} {
		compare(t, []byte(tc.doc))
		if got, err := ToJSON([]byte(tc.doc)); err != nil || string(got) != tc.want {
			t.Errorf("ToJSON(%q) = %s, %v; want %s", tc.doc, got, err, tc.want)
		}
	}
	for _, doc := range []string{
		"16: a\n'16': b\n", "9: a\n\"9\": b\n", "1.0: a\n1: b\n", "true: a\n'true': b\n", "0x10: a\n'16': b\n",
		"a:\n  x: 1\nb:\n  <<: {16: m}\n  '16': n\n",
	} {
		if got, err := ToJSON([]byte(doc)); !errors.Is(err, errKeyCollision) {
			t.Errorf("ToJSON(%q) = %s, %v; want a key collision", doc, got, err)
		}
	}
}
