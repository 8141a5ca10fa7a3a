package kubeletconf

import (
	"bytes"
	"strings"
	"testing"

	"github.com/coreos/go-systemd/v22/unit"
)

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
		opts, err := unit.DeserializeOptions(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("rendered drop-in does not parse: %v\n%s", err, b)
		}
		if len(opts) != 1 || opts[0].Section != "Service" || opts[0].Name != "Environment" {
			t.Fatalf("want one [Service] Environment= option, got %+v", opts)
		}
		words, err := parseEnvironment(opts[0].Value)
		if err != nil {
			t.Fatalf("systemd would reject %q: %v", opts[0].Value, err)
		}
		if len(words) != 1 || words[0] != "KUBELET_EXTRA_ARGS="+value {
			t.Fatalf("value %q came back as %q", value, words)
		}
	})
}
