package kubeletconf

import (
	"strings"

	"github.com/eksboot/eksboot/kubeletconf/kubeletflags"
)

// An Arg is one item of a kubelet command line as the kubelet's flag set (pflag, with
// '_' read as '-') parses it: a flag with its value, or a word that is not a flag.
type Arg struct {
	// Name is the flag's name without dashes, '_' turned into '-' ("max-pods"; "v"
	// for -v). It is "" for a word that is not a flag, whose text is Value.
	Name string
	// Value is the flag's value: after '=', in the same word after a short flag (-v2),
	// or the next word; "" when it has none (HasValue false).
	Value    string
	HasValue bool
	// Short: the flag was given with one dash (-v=2).
	Short bool
	// Bad is pflag's reason to refuse the word's syntax ("bad flag syntax"), or "".
	Bad string
	// First and N are the words the item took: words[First : First+N].
	First, N int
	// AfterTerminator: the word followed "--", so the kubelet takes it as an
	// argument, not a flag, whatever it looks like.
	AfterTerminator bool
}

// Text is the item as the user wrote it: its words joined by spaces.
func (a Arg) Text(words []string) string {
	return strings.Join(words[a.First:a.First+a.N], " ")
}

// A FlagKind is what ParseArgs knows of a flag: whether it takes the next word as
// its value.
type FlagKind int

const (
	// FlagValue takes a value: after '=', else the next word, whatever it is.
	FlagValue FlagKind = iota
	// FlagBool takes a value only after '='.
	FlagBool
	// FlagUnknown is a flag the kubelet may not have: it takes the next word unless
	// that word starts with '-' (the kubelet refuses an unknown flag anyway; this
	// only keeps the judgement of a newer kubelet's flags from going astray).
	FlagUnknown
)

// ParseArgs splits a kubelet command line, one argument each (unitenv.SplitWords of
// $KUBELET_EXTRA_ARGS), into flags and other words as pflag does for the kubelet:
// "--name=value"; "--name value", where the next word is the value, whatever it
// looks like, unless the flag is boolean (it takes a value only after '='); a
// single dash names short flags ("-v=2", "-v 2", "-v2"); a word that does not
// start with '-' (or is "-") is not a flag; "--" ends the flags. kind says what a
// flag (by its normalised name, "v" for -v) is. The names are normalised; whether
// the kubelet has the flag is for the caller to judge.
func ParseArgs(words []string, kind func(name string) FlagKind) []Arg {
	var out []Arg
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "--":
			for j := i + 1; j < len(words); j++ {
				out = append(out, Arg{Value: words[j], First: j, N: 1, AfterTerminator: true})
			}
			return out
		case len(w) < 2 || w[0] != '-':
			out = append(out, Arg{Value: w, First: i, N: 1})
		case w[1] == '-':
			a := Arg{First: i, N: 1}
			name, value, hasValue := strings.Cut(w[2:], "=")
			if name == "" || name[0] == '-' || name[0] == '=' || w[2] == '=' {
				a.Name, a.Bad = w, "bad flag syntax"
				out = append(out, a)
				continue
			}
			a.Name = NormalizeFlagName(name)
			switch k := kind(a.Name); {
			case hasValue:
				a.Value, a.HasValue = value, true
			case k == FlagBool:
			case i+1 < len(words) && (k == FlagValue || !strings.HasPrefix(words[i+1], "-")):
				i++
				a.Value, a.HasValue, a.N = words[i], true, 2
			}
			out = append(out, a)
		default: // a short flag, as pflag's parseSingleShortArg: the first letter names it
			a := Arg{First: i, N: 1, Short: true, Name: w[1:2]}
			rest := w[2:]
			switch k := kind(a.Name); {
			case strings.HasPrefix(rest, "="):
				a.Value, a.HasValue = rest[1:], true
			case k == FlagBool:
				if rest != "" {
					// pflag reads the other letters as more short flags.
					a.Bad = "more than one short flag in one word"
				}
			case rest != "":
				a.Value, a.HasValue = rest, true
			case i+1 < len(words) && (k == FlagValue || !strings.HasPrefix(words[i+1], "-")):
				i++
				a.Value, a.HasValue, a.N = words[i], true, 2
			}
			out = append(out, a)
		}
	}
	return out
}

// NormalizeFlagName turns a flag's name as written into the kubelet's: no leading
// dashes, '_' read as '-' (cliflag.WordSepNormalizeFunc).
func NormalizeFlagName(name string) string {
	return strings.ReplaceAll(strings.TrimLeft(name, "-"), "_", "-")
}

// FindArg returns the last flag name (normalised, "max-pods") among words, parsed as
// the newest kubelet eksboot knows parses them (which flags are boolean changes
// little between minors, and not for the flags eksboot looks for), and whether it
// is there.
func FindArg(words []string, name string) (Arg, bool) {
	minors := kubeletflags.Minors()
	last := minors[len(minors)-1]
	var found Arg
	ok := false
	for _, a := range ParseArgs(words, KindIn(last)) {
		if a.Name == name && !a.Short && a.Bad == "" {
			found, ok = a, true
		}
	}
	return found, ok
}

// KindIn returns what kubelet 1.<minor> (a minor kubeletflags knows) makes of each
// flag: -v takes a value, -h is boolean, a long flag as the table says, and a flag
// the minor lacks is FlagUnknown.
func KindIn(minor int) func(name string) FlagKind {
	return func(name string) FlagKind {
		switch {
		case name == "v":
			return FlagValue
		case name == "h":
			return FlagBool
		case len(name) == 1 || !kubeletflags.Has(minor, name):
			return FlagUnknown
		case kubeletflags.IsBool(minor, name):
			return FlagBool
		}
		return FlagValue
	}
}
