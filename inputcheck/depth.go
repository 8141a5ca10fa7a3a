package inputcheck

import (
	"fmt"
)

// MaxDepth is how deeply a document eksboot decodes may nest: tables, arrays and
// objects, the document itself counted as one. containerd's, the kubelet's and the
// OCI runtime spec's own schemas nest fewer than ten levels; the bound is there
// because a decoder allocates a level for each (a TOML key of 100,000 dotted
// segments took 24 GB) and encoders indent or repeat a table's whole path at each,
// so a deep value made a file quadratic in its depth, larger than the next boot
// reads.
const MaxDepth = 64

// DepthError is a document that nests deeper than MaxDepth.
type DepthError struct {
	Line  int // the line at which the document became too deep (1 is the first)
	Depth int // the depth reached there
}

func (e *DepthError) Error() string {
	return fmt.Sprintf("nested more than %d levels deep (line %d)", MaxDepth, e.Line)
}

// CheckTOMLDepth scans doc, a TOML document, and returns a *DepthError when it
// nests deeper than MaxDepth, before anything decodes it: a table header's dotted
// segments ([a.b.c] is three levels below the document, [[a.b]] one more for the
// array), a key's dotted segments (a.b.c = 1), arrays and inline tables. Strings,
// quoted keys and comments are skipped, so a dot or a bracket inside them counts
// nothing. It does not check the syntax; what it cannot read as TOML it steps over
// and leaves to the decoder to report.
func CheckTOMLDepth(doc string) error {
	s := tomlScanner{doc: doc, line: 1}
	return s.run()
}

type tomlFrame struct {
	kind  byte // 't': the current table, '{': an inline table, '[': an array
	depth int  // the depth of the container itself
}

type tomlScanner struct {
	doc   string
	i     int
	line  int
	stack []tomlFrame
}

func (s *tomlScanner) check(depth int) error {
	if depth > MaxDepth {
		return &DepthError{Line: s.line, Depth: depth}
	}
	return nil
}

func (s *tomlScanner) run() error {
	s.stack = []tomlFrame{{kind: 't', depth: 1}}
	expectKey := true // at the start of a line of the current table
	for s.i < len(s.doc) {
		c := s.doc[s.i]
		top := &s.stack[len(s.stack)-1]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			s.i++
		case c == '\n':
			s.line++
			s.i++
			if top.kind == 't' {
				expectKey = true
			}
		case c == '#':
			for s.i < len(s.doc) && s.doc[s.i] != '\n' {
				s.i++
			}
		case top.kind == 't' && expectKey && c == '[':
			if err := s.header(top); err != nil {
				return err
			}
			expectKey = false
		case expectKey && top.kind == 't':
			found, err := s.keyValue(top.depth)
			if err != nil {
				return err
			}
			expectKey = !found
		case top.kind == '[' && (c == '{' || c == '['):
			// A value inside an array.
			if err := s.value(top.depth + 1); err != nil {
				return err
			}
		case c == '}' || c == ']':
			s.i++
			if top.kind != 't' {
				s.pop()
			}
			expectKey = false
		case c == '"' || c == '\'':
			s.str()
		default:
			s.i++
		}
	}
	return nil
}

// header reads a table header, [a.b] or [[a.b]], and sets the current table's
// depth.
func (s *tomlScanner) header(top *tomlFrame) error {
	s.i++
	extra := 0
	if s.i < len(s.doc) && s.doc[s.i] == '[' {
		s.i++
		extra = 1 // the array of tables, then its element
	}
	top.depth = 1 + s.key() + extra
	if err := s.check(top.depth); err != nil {
		return err
	}
	for s.i < len(s.doc) && s.doc[s.i] == ']' {
		s.i++
	}
	return nil
}

// keyValue reads key = value in a table of the given depth, up to the start of a
// value that is not a container. found is false, and one byte is stepped over,
// when there is no key at s.i.
func (s *tomlScanner) keyValue(depth int) (found bool, err error) {
	start := s.i
	n := s.key()
	if s.i == start {
		s.i++
		return false, nil
	}
	if err := s.check(depth + n - 1); err != nil {
		return true, err
	}
	s.space()
	if s.i < len(s.doc) && s.doc[s.i] == '=' {
		s.i++
	}
	s.space()
	return true, s.value(depth + n)
}

func (s *tomlScanner) pop() {
	s.i++
	if len(s.stack) > 1 {
		s.stack = s.stack[:len(s.stack)-1]
	}
}

// value reads the start of a value whose container, if it is one, has the given
// depth: an inline table or an array is pushed, a string skipped; any other value
// is left to the main loop, which steps over it.
func (s *tomlScanner) value(depth int) error {
	if s.i >= len(s.doc) {
		return nil
	}
	switch s.doc[s.i] {
	case '{', '[':
		if err := s.check(depth); err != nil {
			return err
		}
		s.stack = append(s.stack, tomlFrame{kind: s.doc[s.i], depth: depth})
		s.i++
		if s.stack[len(s.stack)-1].kind == '{' {
			return s.inlineKeys() // the whole inline table, its '}' included
		}
	case '"', '\'':
		s.str()
	}
	return nil
}

// inlineKeys reads the keys and values of the inline table just opened, up to and
// including its '}', recursing through value for nested containers.
func (s *tomlScanner) inlineKeys() error {
	frame := len(s.stack)
	for s.i < len(s.doc) && len(s.stack) >= frame {
		s.space()
		if s.i >= len(s.doc) {
			return nil
		}
		switch c := s.doc[s.i]; c {
		case '}':
			s.pop()
			return nil
		case ',', '\n':
			if c == '\n' {
				s.line++
			}
			s.i++
			continue
		case '#':
			for s.i < len(s.doc) && s.doc[s.i] != '\n' {
				s.i++
			}
			continue
		}
		found, err := s.keyValue(s.stack[frame-1].depth)
		if err != nil {
			return err
		}
		if !found {
			continue
		}
		if err := s.scalarsUntil(frame); err != nil {
			return err
		}
	}
	return nil
}

// scalarsUntil steps over the rest of a value in an inline table or array that
// is at stack index frame-1 or deeper: scalars, strings and nested arrays, until
// the ',' or '}' that ends the inline table's entry.
func (s *tomlScanner) scalarsUntil(frame int) error {
	for s.i < len(s.doc) {
		top := s.stack[len(s.stack)-1]
		c := s.doc[s.i]
		switch {
		case len(s.stack) == frame && (c == ',' || c == '}'):
			return nil
		case c == '\n':
			s.line++
			s.i++
		case c == '#':
			for s.i < len(s.doc) && s.doc[s.i] != '\n' {
				s.i++
			}
		case c == '"' || c == '\'':
			s.str()
		case top.kind == '[' && (c == '[' || c == '{'):
			if err := s.value(top.depth + 1); err != nil {
				return err
			}
		case top.kind == '[' && c == ']':
			s.pop()
		default:
			s.i++
		}
	}
	return nil
}

// key reads a dotted key (bare or quoted segments, spaces around the dots) and
// returns how many segments it has; 0 when there is no key at s.i.
func (s *tomlScanner) key() int {
	n := 0
	for {
		s.space()
		if s.i >= len(s.doc) {
			return n
		}
		switch c := s.doc[s.i]; {
		case c == '"' || c == '\'':
			s.str()
		case isBareKey(c):
			for s.i < len(s.doc) && isBareKey(s.doc[s.i]) {
				s.i++
			}
		default:
			return n
		}
		n++
		s.space()
		if s.i >= len(s.doc) || s.doc[s.i] != '.' {
			return n
		}
		s.i++
	}
}

func isBareKey(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c >= 0x80
}

func (s *tomlScanner) space() {
	for s.i < len(s.doc) && (s.doc[s.i] == ' ' || s.doc[s.i] == '\t') {
		s.i++
	}
}

// str steps over a string at s.i: basic or literal, on one line or multi-line.
func (s *tomlScanner) str() {
	q := s.doc[s.i]
	if len(s.doc)-s.i >= 3 && s.doc[s.i+1] == q && s.doc[s.i+2] == q {
		s.i += 3
		for s.i < len(s.doc) {
			switch c := s.doc[s.i]; {
			case c == '\\' && q == '"':
				s.i += 2
				continue
			case c == '\n':
				s.line++
			case c == q && len(s.doc)-s.i >= 3 && s.doc[s.i+1] == q && s.doc[s.i+2] == q:
				s.i += 3
				for s.i < len(s.doc) && s.doc[s.i] == q { // up to two quotes end the content
					s.i++
				}
				return
			}
			s.i++
		}
		return
	}
	s.i++
	for s.i < len(s.doc) {
		switch c := s.doc[s.i]; {
		case c == '\\' && q == '"':
			s.i += 2
			continue
		case c == '\n':
			return // unterminated: the decoder reports it
		case c == q:
			s.i++
			return
		}
		s.i++
	}
}

// CheckJSONDepth scans doc, JSON, and returns a *DepthError when its arrays and
// objects nest deeper than MaxDepth (the outermost counted as one), before
// anything decodes it. Strings are skipped; the syntax is the decoder's to check.
func CheckJSONDepth(doc []byte) error {
	depth, line := 0, 1
	for i := 0; i < len(doc); i++ {
		switch doc[i] {
		case '\n':
			line++
		case '"':
			for i++; i < len(doc) && doc[i] != '"'; i++ {
				if doc[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			if depth++; depth > MaxDepth {
				return &DepthError{Line: line, Depth: depth}
			}
		case ']', '}':
			depth--
		}
	}
	return nil
}

// TreeDepth is how deeply v, a decoded JSON or TOML value (maps and slices of
// any), nests: 0 for a scalar, 1 for a map or slice of scalars. It stops counting
// past MaxDepth+1.
func TreeDepth(v any) int {
	return treeDepth(v, 0)
}

func treeDepth(v any, at int) int {
	if at > MaxDepth {
		return at
	}
	most := at
	switch v := v.(type) {
	case map[string]any:
		most = at + 1
		for _, e := range v {
			most = max(most, treeDepth(e, at+1))
		}
	case []any:
		most = at + 1
		for _, e := range v {
			most = max(most, treeDepth(e, at+1))
		}
	case []map[string]any:
		most = at + 1
		for _, e := range v {
			most = max(most, treeDepth(e, at+1))
		}
	}
	return most
}
