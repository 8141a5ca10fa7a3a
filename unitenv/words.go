package unitenv

import "strings"

// SplitWords splits a variable's value into the arguments systemd gives a command
// when the variable stands as a word of its own in ExecStart= ("$KUBELET_EXTRA_ARGS"):
// systemd's extract_first_word with EXTRACT_UNQUOTE|EXTRACT_RELAX, which
// replace_env_argv uses. Whitespace (space, tab, CR, LF) separates words; '...' and
// "..." quote, anywhere in a word, and are removed; a backslash, inside quotes or
// not, takes the next byte as it is; and, leniently, a quote left open ends the word
// at the end of the value and a trailing backslash is dropped. A quoted empty string
// is an empty argument. It is pure, and never fails: every value gives the words the
// command receives.
func SplitWords(value string) []string {
	words, _ := SplitWordsAt(value)
	return words
}

// SplitWordsAt is SplitWords that also returns where in value each word starts.
func SplitWordsAt(value string) (words []string, starts []int) {
	for i := 0; ; {
		for i < len(value) && isSpace(value[i]) {
			i++
		}
		if i == len(value) {
			return words, starts
		}
		starts = append(starts, i)
		var b strings.Builder
		var quote byte
		for ; i < len(value); i++ {
			c := value[i]
			switch {
			case c == '\\':
				if i+1 < len(value) {
					i++
					b.WriteByte(value[i])
				}
			case quote != 0:
				if c == quote {
					quote = 0
				} else {
					b.WriteByte(c)
				}
			case c == '\'' || c == '"':
				quote = c
			case isSpace(c):
				goto done
			default:
				b.WriteByte(c)
			}
		}
	done:
		words = append(words, b.String())
	}
}

// JoinWords is SplitWords' inverse: a value that SplitWords (and so systemd) splits
// into exactly words. A word with nothing special in it is written as it is; one
// with whitespace, a quote or a backslash in it, or an empty one, is double-quoted
// with '\' before each '"' and '\'. Control characters other than whitespace pass
// through unchanged (CheckValue decides whether the value may be written at all).
func JoinWords(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		if w != "" && !strings.ContainsAny(w, " \t\r\n'\"\\") {
			b.WriteString(w)
			continue
		}
		b.WriteByte('"')
		for j := 0; j < len(w); j++ {
			if w[j] == '"' || w[j] == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(w[j])
		}
		b.WriteByte('"')
	}
	return b.String()
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
