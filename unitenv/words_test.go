package unitenv_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/systemd/systemdtest"
	"github.com/eksboot/eksboot/unitenv"
)

// splitCases are values with the words systemd makes of them (checked against a real
// systemd by TestSplitWordsAsSystemdDoes).
var splitCases = []struct {
	value string
	want  []string
}{
	{"", nil},
	{"   \t ", nil},
	{"--a=1 --b", []string{"--a=1", "--b"}},
	{"  --a=1\t\t--b  ", []string{"--a=1", "--b"}},
	{`--node-labels="a=b c"`, []string{"--node-labels=a=b c"}},
	{`--x='y z' "p"q'r'`, []string{"--x=y z", "pqr"}},
	{`--x="" ''`, []string{"--x=", ""}},
	{`"" x`, []string{"", "x"}},
	{`a\ b`, []string{"a b"}},
	{`a\\b \"c`, []string{`a\b`, `"c`}},
	{`"a\"b" 'c\'d'`, []string{`a"b`, `c'd`}},
	{`--open="a b`, []string{"--open=a b"}},
	{`--open='a b`, []string{"--open=a b"}},
	{`trailing\`, []string{"trailing"}},
	{`x "\`, []string{"x", ""}},
	{`$HOME %h 100%`, []string{"$HOME", "%h", "100%"}},
	{"ünï 'é f'", []string{"ünï", "é f"}},
}

func TestSplitWords(t *testing.T) {
	for _, tc := range splitCases {
		if got := unitenv.SplitWords(tc.value); !slices.Equal(got, tc.want) {
			t.Errorf("SplitWords(%q) = %q, want %q", tc.value, got, tc.want)
		}
	}
}

// joinCases are argument lists JoinWords must carry through systemd unchanged.
var joinCases = [][]string{
	{"--a=1", "--b"},
	{"--node-labels=a=b c", "--x"},
	{"", "quote\"d", `back\slash`, "it's", "tab\there"},
	{`"`, `\`, `'`, `\"`, "--v=2"},
}

func TestJoinWordsRoundTrips(t *testing.T) {
	for _, words := range joinCases {
		if got := unitenv.SplitWords(unitenv.JoinWords(words)); !slices.Equal(got, words) {
			t.Errorf("SplitWords(JoinWords(%q)) = %q", words, got)
		}
	}
	if got := unitenv.JoinWords([]string{"--a=1", "--b"}); got != "--a=1 --b" {
		t.Errorf("JoinWords of plain words = %q, want them as they are", got)
	}
}

func FuzzJoinWords(f *testing.F) {
	for _, words := range joinCases {
		f.Add(strings.Join(words, "\x00"))
	}
	f.Fuzz(func(t *testing.T, s string) {
		words := strings.Split(s, "\x00")
		if got := unitenv.SplitWords(unitenv.JoinWords(words)); !slices.Equal(got, words) {
			t.Fatalf("SplitWords(JoinWords(%q)) = %q", words, got)
		}
	})
}

// TestSplitWordsAsSystemdDoes runs each value through a real systemd: a unit whose
// drop-in sets X to the value as kubeletconf.EnvDropIn writes it (the kubelet's own
// drop-ins are made so), and whose ExecStart= passes $X to a shell that writes the
// arguments it got. What the shell got must be what SplitWords says, and, for every
// list of joinCases, the list JoinWords was given.
func TestSplitWordsAsSystemdDoes(t *testing.T) {
	dir, err := os.MkdirTemp("", "eksboot-split-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	unitDir := filepath.Join(dir, "units")
	if err := os.Mkdir(unitDir, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "dump.sh")
	if err := os.WriteFile(script, []byte("for a; do printf '%s\\000' \"$a\"; done > \"$OUT\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	values := make([]string, 0, len(splitCases)+len(joinCases))
	for _, tc := range splitCases {
		values = append(values, tc.value)
	}
	for _, words := range joinCases {
		values = append(values, unitenv.JoinWords(words))
	}
	for i, v := range values {
		dropIn, err := kubeletconf.EnvDropIn("X", v)
		if err != nil {
			t.Fatalf("value %q: %v", v, err)
		}
		unit := fmt.Sprintf("[Service]\nType=oneshot\nEnvironment=OUT=%s\nExecStart=/bin/sh %s $X\n",
			filepath.Join(dir, fmt.Sprintf("out-%d", i)), script)
		name := fmt.Sprintf("split-%d.service", i)
		if err := os.WriteFile(filepath.Join(unitDir, name), []byte(unit), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(unitDir, name+".d"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(unitDir, name+".d", "x.conf"), dropIn, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := systemdtest.Start(t, unitDir)
	for i, v := range values {
		name := fmt.Sprintf("split-%d.service", i)
		if out, err := h.Systemctl("start", name); err != nil {
			st, _ := h.Systemctl("status", "--no-pager", name)
			t.Fatalf("start %s: %v\n%s\n%s", name, err, out, st)
		}
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("out-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range bytes.Split(b, []byte{0}) {
			got = append(got, string(w))
		}
		got = got[:len(got)-1] // after the last NUL
		if want := unitenv.SplitWords(v); !slices.Equal(got, want) {
			t.Errorf("systemd split %q into %q; SplitWords says %q", v, got, want)
		}
		if j := i - len(splitCases); j >= 0 && !slices.Equal(got, joinCases[j]) {
			t.Errorf("systemd split JoinWords(%q) = %q into %q", joinCases[j], v, got)
		}
	}
}
