package doctor

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// oneLine escapes s for one line of a terminal: control characters (C0 with the
// newline and the tab, DEL, C1), Unicode's other unprintable runes (the line and
// paragraph separators, the bidirectional controls) and bytes that are not UTF-8
// become Go escapes (\n, \x1b, \u202e), as strconv.Quote writes them, and journalctl
// shows such a field only as "[N blob data]"; the rest, backslashes included, is
// kept. So an ESC sequence from a journal line never reaches the terminal, and a
// newline in an API server's answer cannot start a line of doctor's own.
func oneLine(s string) string {
	if printable(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case !unicode.IsPrint(r) && r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		case !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// printable reports whether s needs no escape.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return strings.IndexFunc(s, func(r rune) bool { return r == utf8.RuneError || !unicode.IsPrint(r) }) < 0 && utf8.ValidString(s)
		}
	}
	return true
}
