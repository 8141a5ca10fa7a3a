package inputcheck

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/eksboot/eksboot/assets"
)

// tomlAtDepth are TOML documents that nest exactly d levels (the document counted
// as one), one for each way TOML has of nesting.
var tomlAtDepth = map[string]func(d int) string{
	"dotted key": func(d int) string { return strings.Repeat("a.", d-1) + "x = 1\n" },
	"quoted dotted": func(d int) string {
		segs := make([]string, d-1)
		for i := range segs {
			segs[i] = [2]string{`"a.b"`, `'c[d'`}[i%2]
		}
		return strings.Join(segs, " . ") + " . x = 1\n"
	},
	"table header":   func(d int) string { return "[" + strings.Repeat("a.", d-2) + "b]\nx = 1\n" },
	"array of table": func(d int) string { return "[[" + strings.Repeat("a.", d-3) + "b]]\nx = 1\n" },
	"inline tables": func(d int) string {
		return "x = " + strings.Repeat("{ a = ", d-1) + "1" + strings.Repeat(" }", d-1) + "\n"
	},
	"arrays": func(d int) string { return "x = " + strings.Repeat("[", d-1) + "1" + strings.Repeat("]", d-1) + "\n" },
	"arrays over lines": func(d int) string {
		return "x = [\n  # [[[ not a level\n" + strings.Repeat("  [\n", d-2) + "  \"]]\"" + strings.Repeat("\n]", d-1) + "\n"
	},
	"mixed": func(d int) string {
		// [t.u] is 3, k.l 1 more, then arrays and inline tables alternate.
		rest := d - 4
		return "[t.u]\nk.l = " + strings.Repeat("[{ m = ", rest/2) + strings.Repeat("[", rest%2) + "1" +
			strings.Repeat("]", rest%2) + strings.Repeat(" }]", rest/2) + "\n"
	},
	"after strings and comments": func(d int) string {
		return "s = \"\"\"\n[a.b.c.d.e]\n{[\"\"\"\nl = '''\n[[[['''\n# a.b.c.d = [[[[\n" + strings.Repeat("a.", d-1) + "x = 1\n"
	},
}

// TestCheckTOMLDepthAgreesWithTheDecoder: every form at MaxDepth is accepted and
// decodes to exactly that depth; one level more is refused before decoding, naming
// the line.
func TestCheckTOMLDepthAgreesWithTheDecoder(t *testing.T) {
	for name, doc := range tomlAtDepth {
		t.Run(name, func(t *testing.T) {
			ok := doc(MaxDepth)
			if err := CheckTOMLDepth(ok); err != nil {
				t.Fatalf("depth %d refused: %v\n%s", MaxDepth, err, ok)
			}
			var m map[string]any
			if err := toml.Unmarshal([]byte(ok), &m); err != nil {
				t.Fatalf("not TOML: %v\n%s", err, ok)
			}
			if got := TreeDepth(m); got != MaxDepth {
				t.Errorf("decoded depth %d, want %d", got, MaxDepth)
			}
			var de *DepthError
			if err := CheckTOMLDepth(doc(MaxDepth + 1)); !errors.As(err, &de) || de.Depth != MaxDepth+1 {
				t.Errorf("depth %d: %v, want a DepthError", MaxDepth+1, err)
			}
		})
	}
}

// TestCheckTOMLDepthStopsEarly: a key of 100,000 dotted segments (today's
// out-of-memory) is refused at once, at its line.
func TestCheckTOMLDepthStopsEarly(t *testing.T) {
	doc := "version = 3\n" + strings.Repeat("a.", 100_000) + "x = 1\n"
	err := CheckTOMLDepth(doc)
	if err == nil || err.Error() != "nested more than 64 levels deep (line 2)" {
		t.Errorf("got %v", err)
	}
}

// TestCheckTOMLDepthTakesRealConfigs: the templates and every containerd config of
// the test data pass, at their decoded depth or more.
func TestCheckTOMLDepthTakesRealConfigs(t *testing.T) {
	docs := map[string]string{"v2": assets.ContainerdConfig, "v3": assets.ContainerdConfigV3}
	for _, glob := range []string{"testdata/*.toml", "../testdata/*/*/*.toml", "../testdata/*/*/*/*.toml", "../testdata/*/*/*/*/*.toml"} {
		paths, _ := filepath.Glob(glob)
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			docs[p] = string(b)
		}
	}
	if len(docs) < 5 {
		t.Fatalf("only %d configs", len(docs))
	}
	for name, doc := range docs {
		if err := CheckTOMLDepth(doc); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestCheckJSONDepth(t *testing.T) {
	at := func(d int) []byte {
		return []byte(`{"s": "[[{{\"", "a": ` + strings.Repeat(`[{"b": `, (d-1)/2) + strings.Repeat("[", (d-1)%2) + "1" +
			strings.Repeat("]", (d-1)%2) + strings.Repeat("}]", (d-1)/2) + "}")
	}
	if err := CheckJSONDepth(at(MaxDepth)); err != nil {
		t.Errorf("depth %d: %v", MaxDepth, err)
	}
	if err := CheckJSONDepth(at(MaxDepth + 1)); err == nil {
		t.Errorf("depth %d accepted", MaxDepth+1)
	}
}

// FuzzTOMLDepth: whatever the decoder takes, the scan never counts fewer levels
// than the decoded tree has, so a document it passes is never deeper than
// MaxDepth.
func FuzzTOMLDepth(f *testing.F) {
	for _, doc := range tomlAtDepth {
		f.Add(doc(MaxDepth))
		f.Add(doc(MaxDepth + 1))
		f.Add(doc(6))
	}
	f.Add(assets.ContainerdConfigV3)
	f.Fuzz(func(t *testing.T, doc string) {
		if len(doc) > 64<<10 {
			return
		}
		var m map[string]any
		if toml.Unmarshal([]byte(doc), &m) != nil {
			return
		}
		if d := TreeDepth(m); d > MaxDepth && CheckTOMLDepth(doc) == nil {
			t.Fatalf("decoded depth %d, the scan found nothing too deep", d)
		}
	})
}
