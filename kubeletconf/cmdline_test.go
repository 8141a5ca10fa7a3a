package kubeletconf

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestParseArgs holds ParseArgs to pflag's reading of a kubelet command line.
func TestParseArgs(t *testing.T) {
	kind := func(n string) FlagKind {
		switch n {
		case "fail-swap-on", "h", "register-node":
			return FlagBool
		case "unknown", "q":
			return FlagUnknown
		}
		return FlagValue
	}
	for _, tc := range []struct {
		words []string
		want  string // each item as name=value, name (no value), "word" for a word that is not a flag, !bad
	}{
		{[]string{"--max-pods=5", "--node-labels", "a=b"}, "max-pods=5 node-labels=a=b"},
		{[]string{"--max_pods", "7"}, "max-pods=7"},
		{[]string{"--fail-swap-on", "false"}, `fail-swap-on "false"`},
		{[]string{"--fail-swap-on=false"}, "fail-swap-on=false"},
		{[]string{"--node-labels", "--max-pods=5"}, "node-labels=--max-pods=5"},
		{[]string{"--node-labels"}, "node-labels"},
		{[]string{"-v=2", "-v", "3", "-v4"}, "-v=2 -v=3 -v=4"},
		{[]string{"-h"}, "-h"},
		{[]string{"-hv"}, "-h!"},
		{[]string{"---x", "--=a", "--"}, "---x! --=a!"},
		{[]string{"--a=1", "--", "--b=2", "c"}, `a=1 "--b=2"-- "c"--`},
		{[]string{"-", "x", "--register-node"}, `"-" "x" register-node`},
		{[]string{"--a=", "--b==c"}, "a= b==c"},
		{[]string{"--unknown", "x", "--unknown", "--y=1", "-q", "-z=2", "-q", "w"}, "unknown=x unknown y=1 -q -z=2 -q=w"},
	} {
		var got []string
		for _, a := range ParseArgs(tc.words, kind) {
			s := a.Name
			switch {
			case a.Name == "":
				s = fmt.Sprintf("%q", a.Value)
				if a.AfterTerminator {
					s += "--"
				}
			case a.Short:
				s = "-" + s
			}
			if a.HasValue {
				s += "=" + a.Value
			}
			if a.Bad != "" {
				s += "!"
			}
			got = append(got, s)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("ParseArgs(%q) = %s, want %s", tc.words, strings.Join(got, " "), tc.want)
		}
	}
}

// TestParseArgsCoversEveryWord: every word belongs to exactly one item, in order.
func TestParseArgsCoversEveryWord(t *testing.T) {
	words := []string{"--a", "b", "-v", "2", "x", "--c=d", "--", "--e", "f"}
	var seen []int
	for _, a := range ParseArgs(words, func(string) FlagKind { return FlagValue }) {
		for i := a.First; i < a.First+a.N; i++ {
			seen = append(seen, i)
		}
	}
	if want := []int{0, 1, 2, 3, 4, 5, 7, 8}; !slices.Equal(seen, want) { // "--" itself is no item
		t.Errorf("words covered %v, want %v", seen, want)
	}
}

func TestFindArg(t *testing.T) {
	words := []string{"--max-pods=10", "--node-labels=a=b", "--max_pods", "20", "--", "--max-pods=30"}
	a, ok := FindArg(words, "max-pods")
	if !ok || a.Value != "20" {
		t.Errorf("FindArg max-pods = %+v, %v; want the last flag before --, 20", a, ok)
	}
	if _, ok := FindArg(words, "reserved-cpus"); ok {
		t.Error("FindArg found a flag that is not there")
	}
	if _, ok := FindArg([]string{"--node-labels=--reserved-cpus"}, "reserved-cpus"); ok {
		t.Error("FindArg took a value for a flag")
	}
}

func TestFlagWords(t *testing.T) {
	flags := []string{`--node-labels="a=b,c=d"`, "--x=a b", "--y", "1", `--z="open`, "more"}
	words, from := FlagWords(flags)
	wantWords := []string{"--node-labels=a=b,c=d", "--x=a b", "--y", "1", "--z=open more"}
	if !slices.Equal(words, wantWords) || !slices.Equal(from, []int{0, 1, 2, 3, 4}) {
		t.Errorf("FlagWords = %q %v, want %q [0 1 2 3 4]", words, from, wantWords)
	}
}
