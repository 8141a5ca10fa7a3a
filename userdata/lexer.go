package userdata

import (
	"errors"
	"regexp"
	"strings"
	"sync"
)

// lexer splits a script into simple commands. It knows quotes, backslashes, comments,
// line continuations, $VAR, ${VAR}, $(...), `...`, here-documents and operators; it
// executes nothing.
type lexer struct {
	src      string
	pos      int
	line     int
	heredocs []string
}

var errUnterminated = errors.New("unterminated quote or substitution")

// command returns the next simple command with at least one word, or nil at the end.
func (lx *lexer) command() (*command, error) {
	for lx.pos < len(lx.src) {
		cmd := &command{line: lx.line}
		for {
			w, end, err := lx.word()
			if err != nil {
				return nil, err
			}
			if w != nil {
				if len(cmd.words) == 0 && len(w) == 1 && w[0].kind == 'l' && !w[0].quoted && reserved[w[0].text] {
					cmd.line = lx.line
					continue
				}
				if len(cmd.words) == 0 {
					cmd.line = lx.line
				}
				cmd.words = append(cmd.words, w)
			}
			if end {
				break
			}
		}
		if len(cmd.words) > 0 {
			return cmd, nil
		}
	}
	return nil, nil
}

var reserved = map[string]bool{"then": true, "do": true, "else": true, "elif": true, "if": true, "while": true, "until": true, "!": true, "{": true, "}": true, "time": true}

// word reads the next word; end is set when a command terminator follows.
func (lx *lexer) word() (word, bool, error) {
	src := lx.src
	// Skip blanks and continuations.
	for lx.pos < len(src) {
		c := src[lx.pos]
		if c == ' ' || c == '\t' || c == '\r' {
			lx.pos++
		} else if c == '\\' && lx.pos+1 < len(src) && src[lx.pos+1] == '\n' {
			lx.pos += 2
			lx.line++
		} else {
			break
		}
	}
	if lx.pos >= len(src) {
		return nil, true, nil
	}
	switch c := src[lx.pos]; {
	case c == '#':
		for lx.pos < len(src) && src[lx.pos] != '\n' {
			lx.pos++
		}
		return nil, false, nil
	case c == '\n':
		lx.pos++
		lx.line++
		lx.skipHeredocs()
		return nil, true, nil
	case c == ';' || c == '&' || c == '|' || c == '(' || c == ')':
		lx.pos++
		return nil, true, nil
	case c == '<' || c == '>':
		return nil, false, lx.redirect()
	}
	var w word
	lit := func(s string, quoted bool) { w.add(seg{text: s, quoted: quoted, kind: 'l'}) }
	for lx.pos < len(src) {
		c := src[lx.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '<' || c == '>':
			return w.compact(), false, nil
		case c == '\\':
			if lx.pos+1 < len(src) {
				if src[lx.pos+1] == '\n' {
					lx.line++
				} else {
					lit(src[lx.pos+1:lx.pos+2], true)
				}
				lx.pos += 2
			} else {
				lx.pos++
			}
		case c == '\'':
			end := strings.IndexByte(src[lx.pos+1:], '\'')
			if end < 0 {
				return nil, false, errUnterminated
			}
			s := src[lx.pos+1 : lx.pos+1+end]
			lx.line += strings.Count(s, "\n")
			lit(s, true)
			lx.pos += end + 2
		case c == '"':
			lx.pos++
			if err := lx.double(&w); err != nil {
				return nil, false, err
			}
		case c == '$' || c == '`':
			s, err := lx.dollar(false)
			if err != nil {
				return nil, false, err
			}
			w = append(w, s)
		default:
			end := lx.pos + 1
			for end < len(src) && strings.IndexByte(" \t\r\n;&|()<>\\'\"$`", src[end]) < 0 {
				end++
			}
			lit(src[lx.pos:end], false)
			lx.pos = end
		}
	}
	return w.compact(), false, nil
}

// double reads a double-quoted string (after the opening quote) into w.
func (lx *lexer) double(w *word) error {
	src := lx.src
	for lx.pos < len(src) {
		c := src[lx.pos]
		switch {
		case c == '"':
			lx.pos++
			*w = append(*w, seg{quoted: true, kind: 'l'})
			return nil
		case c == '\\' && lx.pos+1 < len(src) && strings.IndexByte("$`\"\\\n", src[lx.pos+1]) >= 0:
			if src[lx.pos+1] != '\n' {
				w.add(seg{text: src[lx.pos+1 : lx.pos+2], quoted: true, kind: 'l'})
			} else {
				lx.line++
			}
			lx.pos += 2
		case c == '$' || c == '`':
			s, err := lx.dollar(true)
			if err != nil {
				return err
			}
			*w = append(*w, s)
		default:
			end := lx.pos + 1
			for end < len(src) && strings.IndexByte("\"\\$`", src[end]) < 0 {
				end++
			}
			lx.line += strings.Count(src[lx.pos:end], "\n")
			w.add(seg{text: src[lx.pos:end], quoted: true, kind: 'l'})
			lx.pos = end
		}
	}
	return errUnterminated
}

var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*`) })

// dollar reads $NAME, ${...}, $(...), $((...)), `...` or a lone $.
func (lx *lexer) dollar(quoted bool) (seg, error) {
	src := lx.src[lx.pos:]
	if src[0] == '`' {
		end := strings.IndexByte(src[1:], '`')
		if end < 0 {
			return seg{}, errUnterminated
		}
		lx.advance(src[:end+2])
		return seg{kind: 'u', reason: "a `command` substitution"}, nil
	}
	if len(src) > 1 && src[1] == '(' {
		n, err := balanced(src[1:], '(', ')')
		if err != nil {
			return seg{}, err
		}
		lx.advance(src[:n+1])
		return seg{kind: 'u', reason: "the command substitution " + clip(src[:n+1])}, nil
	}
	if len(src) > 1 && src[1] == '{' {
		end := strings.IndexByte(src, '}')
		if end < 0 {
			return seg{}, errUnterminated
		}
		inner := src[2:end]
		lx.advance(src[:end+1])
		if nameRE().FindString(inner) == inner {
			return seg{text: inner, quoted: quoted, kind: 'v'}, nil
		}
		return seg{kind: 'u', reason: "the parameter expansion " + clip(src[:end+1])}, nil
	}
	if name := nameRE().FindString(src[1:]); name != "" {
		lx.pos += 1 + len(name)
		return seg{text: name, quoted: quoted, kind: 'v'}, nil
	}
	if len(src) > 1 && strings.IndexByte("@*#?$!0123456789-", src[1]) >= 0 {
		lx.pos += 2
		return seg{kind: 'u', reason: "the special parameter " + src[:2]}, nil
	}
	lx.pos++
	return seg{text: "$", quoted: quoted, kind: 'l'}, nil
}

// advance moves past s, counting its lines.
func (lx *lexer) advance(s string) {
	lx.pos += len(s)
	lx.line += strings.Count(s, "\n")
}

// balanced returns the length of s up to and including the bracket that closes s[0],
// skipping quoted text.
func balanced(s string, open, closer byte) (int, error) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case open:
			depth++
		case closer:
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		case '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return 0, errUnterminated
			}
			i += end + 1
		case '\\':
			i++
		}
	}
	return 0, errUnterminated
}

// redirect skips a redirection operator and its target; <<WORD starts a here-document
// and >(...) / <(...) a process substitution.
func (lx *lexer) redirect() error {
	src := lx.src
	start := lx.pos
	for lx.pos < len(src) && strings.IndexByte("<>&-|", src[lx.pos]) >= 0 && lx.pos-start < 3 {
		if src[lx.pos] == '&' && lx.pos > start && src[lx.pos-1] != '>' && src[lx.pos-1] != '<' {
			break
		}
		lx.pos++
	}
	op := src[start:lx.pos]
	if lx.pos < len(src) && src[lx.pos] == '(' {
		n, err := balanced(src[lx.pos:], '(', ')')
		if err != nil {
			return err
		}
		lx.advance(src[lx.pos : lx.pos+n])
		return nil
	}
	if strings.HasPrefix(op, "<<") && !strings.HasPrefix(op, "<<<") {
		w, _, err := lx.word()
		if err != nil {
			return err
		}
		delim := w.text()
		if strings.HasPrefix(op, "<<-") {
			delim = "\t" + delim
		}
		lx.heredocs = append(lx.heredocs, delim)
		return nil
	}
	_, _, err := lx.word()
	return err
}

// skipHeredocs skips the bodies of pending here-documents (called after a newline).
func (lx *lexer) skipHeredocs() {
	for _, d := range lx.heredocs {
		strip := strings.HasPrefix(d, "\t")
		d = strings.TrimPrefix(d, "\t")
		for lx.pos < len(lx.src) {
			line, _, _ := strings.Cut(lx.src[lx.pos:], "\n")
			lx.pos += len(line) + 1
			lx.line++
			t := strings.TrimRight(line, "\r")
			if strip {
				t = strings.TrimLeft(t, "\t")
			}
			if t == d {
				break
			}
		}
	}
	lx.pos = min(lx.pos, len(lx.src))
	lx.heredocs = nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}
