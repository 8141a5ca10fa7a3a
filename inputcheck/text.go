package inputcheck

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/eksboot/eksboot/internal/quote"
)

// CheckText returns a problem when s is not text of one line: a byte that is not
// UTF-8, or a control character (C0, DEL or C1), a tab included unless tab is set.
// Every file eksboot writes is line-oriented (systemd units and drop-ins, TOML,
// JSON read by programs that take their strings as names, paths and flags), and
// none of the programs that read them has a use for a control character in a
// value: a line break is a new line of the file or a new argument, an escape
// sequence a forged terminal line.
func CheckText(s string, tab bool) error {
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return fmt.Errorf("byte 0x%02x at byte %d is not UTF-8", s[i], i)
		case r == '\t' && tab:
		case unicode.IsControl(r):
			return fmt.Errorf("control character %U at byte %d is not allowed", r, i)
		}
	}
	return nil
}

// CheckTreeText checks every key and every string of v, a decoded JSON or TOML
// value, with CheckText (no tab), and returns a problem for each, naming its path
// under at (spec.kubelet.config.registerWithTaints[0].key). The problems are in
// key order; at most quote.MaxProblems+1 are returned.
func CheckTreeText(v any, at string) []string {
	var out []string
	var walk func(v any, at string)
	walk = func(v any, at string) {
		if len(out) > quote.MaxProblems {
			return
		}
		switch v := v.(type) {
		case string:
			if err := CheckText(v, false); err != nil {
				out = append(out, fmt.Sprintf("%s: %v", at, err))
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				p := at + "." + quote.Name(k)
				if err := CheckText(k, false); err != nil {
					out = append(out, fmt.Sprintf("%s: key: %v", p, err))
					continue
				}
				walk(v[k], p)
			}
		case []any:
			for i, e := range v {
				walk(e, fmt.Sprintf("%s[%d]", at, i))
			}
		case []map[string]any:
			for i, e := range v {
				walk(e, fmt.Sprintf("%s[%d]", at, i))
			}
		}
	}
	walk(v, at)
	return out
}
