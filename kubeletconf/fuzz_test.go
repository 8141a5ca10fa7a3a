package kubeletconf

import (
	"bytes"
	"strings"
	"testing"

	"github.com/coreos/go-systemd/v22/unit"

	"github.com/eksboot/eksboot/unitenv/unitenvtest"
)

// goSystemdMaxLine is the longest line go-systemd's unit.DeserializeOptions reads.
const goSystemdMaxLine = 2048

// FuzzEnvDropIn renders a drop-in for any value and parses it back the way systemd
// does (go-systemd's unit.DeserializeOptions, then Environment= word splitting and
// unescaping): a value that EnvDropIn accepts must come back byte for byte.
func FuzzEnvDropIn(f *testing.F) {
	for _, seed := range []string{
		"--node-labels=a=b --max-pods=58",
		`--eviction-hard="memory.available<200Mi" --x='y z'`,
		`--pct=50% --home=$HOME --bs=a\b \`,
		"tab\there", "ünïcödé ✓", "'", `"`, "%%n", "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		b, err := EnvDropIn("KUBELET_EXTRA_ARGS", value)
		if err != nil {
			if !strings.Contains(err.Error(), "KUBELET_EXTRA_ARGS") {
				t.Fatalf("error %q does not name the variable", err)
			}
			return
		}
		var assignment string
		if len(b) <= goSystemdMaxLine {
			opts, err := unit.DeserializeOptions(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("rendered drop-in does not parse: %v\n%s", err, b)
			}
			if len(opts) != 1 || opts[0].Section != "Service" || opts[0].Name != "Environment" {
				t.Fatalf("want one [Service] Environment= option, got %+v", opts)
			}
			assignment = opts[0].Value
		} else {
			// go-systemd's parser stops at 2048-byte lines; systemd reads lines of up
			// to 1 MiB. Take the line apart by hand.
			rest, ok := strings.CutPrefix(string(b), "[Service]\nEnvironment=")
			if !ok || !strings.HasSuffix(rest, "\n") || strings.Count(rest, "\n") != 1 {
				t.Fatalf("want one [Service] Environment= line, got %q", b)
			}
			assignment = strings.TrimSuffix(rest, "\n")
		}
		words, err := unitenvtest.Parse(assignment)
		if err != nil {
			t.Fatalf("systemd would reject %q: %v", assignment, err)
		}
		if len(words) != 1 || words[0] != "KUBELET_EXTRA_ARGS="+value {
			t.Fatalf("value %q came back as %q", value, words)
		}
	})
}
