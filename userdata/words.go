package userdata

import (
	"regexp"
	"strings"
	"sync"
)

// seg is a piece of a shell word.
type seg struct {
	text   string
	quoted bool   // inside single or double quotes: no field splitting
	kind   byte   // 'l' literal, 'v' variable (text is its name), 'u' unresolvable
	reason string // for 'u': what it is
}

// word is one shell word as segments.
type word []seg

// command is a simple command: its words and its first line.
type command struct {
	words []word
	line  int
}

func (w word) literal() bool {
	for _, s := range w {
		if s.kind != 'l' {
			return false
		}
	}
	return true
}

func (w word) text() string {
	var b strings.Builder
	for _, s := range w {
		b.WriteString(s.text)
	}
	return b.String()
}

var assignRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`) })

// add appends s (compact joins the pieces when the word is complete).
func (w *word) add(s seg) { *w = append(*w, s) }

// compact joins runs of literal segments with the same quoting (in linear time).
func (w word) compact() word {
	var out word
	var b strings.Builder
	for i, s := range w {
		if s.kind != 'l' {
			out = append(out, s)
			continue
		}
		b.WriteString(s.text)
		if i+1 < len(w) && w[i+1].kind == 'l' && w[i+1].quoted == s.quoted {
			continue
		}
		out = append(out, seg{text: b.String(), quoted: s.quoted, kind: 'l'})
		b.Reset()
	}
	return out
}

// assignment splits NAME=value (NAME unquoted).
func (w word) assignment() (string, word, bool) {
	if len(w) == 0 || w[0].kind != 'l' || w[0].quoted {
		return "", nil, false
	}
	m := assignRE().FindString(w[0].text)
	if m == "" {
		return "", nil, false
	}
	rest := append(word{{text: w[0].text[len(m):], kind: 'l'}}, w[1:]...)
	return m[:len(m)-1], rest, true
}

// expand gives the fields of w with vars substituted, or the reason it cannot.
func (w word) expand(vars map[string]string) ([]string, string) {
	var fields []string
	var cur strings.Builder
	have := false
	for _, s := range w {
		switch s.kind {
		case 'u':
			return nil, s.reason
		case 'l':
			cur.WriteString(s.text)
			have = have || s.text != "" || s.quoted
		case 'v':
			v, ok := vars[s.text]
			if !ok {
				return nil, "the variable $" + s.text + ", which the script does not set to a literal value before"
			}
			if s.quoted {
				cur.WriteString(v)
				have = true
				continue
			}
			for i, f := range strings.Fields(v) {
				if i > 0 {
					fields = append(fields, cur.String())
					cur.Reset()
				}
				cur.WriteString(f)
				have = true
			}
		}
	}
	if have {
		fields = append(fields, cur.String())
	}
	return fields, ""
}

// expandString is expand for an assignment value (no field splitting).
func (w word) expandString(vars map[string]string) (string, string) {
	for i := range w {
		w[i].quoted = true
	}
	f, reason := w.expand(vars)
	return strings.Join(f, ""), reason
}
