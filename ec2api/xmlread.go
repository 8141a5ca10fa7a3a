package ec2api

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/eksboot/eksboot/internal/scrub"
)

// The EC2 Query API answers in XML. encoding/xml would do, but nothing else on
// the boot path links it (it came with the SDK's EC2 client), so ec2api reads the
// answers with the small reader below: elements, character data (with XML's five
// entities and character references, CDATA sections, and \r\n read as \n),
// comments and processing instructions, and nothing else. A DOCTYPE (where entity
// expansion would live) or a namespace prefix on an element is refused. The reader
// accepts a subset of what encoding/xml accepts and, for what it accepts, gives the
// same tree (FuzzReadXML holds it to encoding/xml).

// Bounds of an answer (EC2 answers one instance or one type in a few KiB).
const (
	maxAnswer   = 1 << 20 // bytes of an answer body
	maxDepth    = 32      // nesting of elements
	maxElements = 1 << 14 // elements in an answer
)

// element is one element of an answer: its local name, the character data
// directly inside it, and its child elements in order.
type element struct {
	name string
	text string
	kids []*element
}

// child returns the only child named name, nil when there is none, and an error
// when there are several (an answer EC2 does not give).
func (e *element) child(name string) (*element, error) {
	var found *element
	for _, k := range e.kids {
		if k.name != name {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("two %s elements in %s", name, e.name)
		}
		found = k
	}
	return found, nil
}

// items returns the item children of e's child name (EC2's lists: <name><item>...</item></name>).
func (e *element) items(name string) ([]*element, error) {
	list, err := e.child(name)
	if err != nil || list == nil {
		return nil, err
	}
	var out []*element
	for _, k := range list.kids {
		if k.name == "item" {
			out = append(out, k)
		}
	}
	return out, nil
}

// str returns the text of e's child name ("" when there is none).
func (e *element) str(name string) (string, error) {
	k, err := e.child(name)
	if err != nil || k == nil {
		return "", err
	}
	if len(k.kids) > 0 {
		return "", fmt.Errorf("%s in %s has elements inside, want text", name, e.name)
	}
	return k.text, nil
}

// int32 returns the number in e's child name (0 when there is none or it is
// empty, as the SDK reads an Integer), a decimal int32 with nothing around it.
func (e *element) int32(name string) (int32, error) {
	s, err := e.str(name)
	if err != nil {
		return 0, err
	}
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%s in %s: %q is not a 32-bit integer", name, e.name, quoteShort(s))
	}
	return int32(n), nil
}

// count returns the number in e's child name as int32 does, which must be from 0
// to most: a count of EC2's facts that a node's max pods is worked out from.
func (e *element) count(name string, most int32) (int32, error) {
	n, err := e.int32(name)
	if err == nil && (n < 0 || n > most) {
		err = fmt.Errorf("%s in %s: %d is out of range (0-%d)", name, e.name, n, most)
	}
	return n, err
}

// quoteShort scrubs s of secrets (scrub.Text) and cuts it to 40 bytes for an error
// message.
func quoteShort(s string) string {
	s = scrub.Text(s)
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// errXML is wrapped by every error of readXML.
var errXML = errors.New("not well-formed XML")

// xmlReader is readXML's state: the input and the offset of the next byte.
type xmlReader struct {
	b     []byte
	i     int
	stack []*element
	root  *element
	count int
}

// readXML reads one XML document of at most maxAnswer bytes into its root element.
func readXML(b []byte) (*element, error) {
	if len(b) > maxAnswer {
		return nil, fmt.Errorf("%w: larger than %d bytes", errXML, maxAnswer)
	}
	r := &xmlReader{b: b}
	for r.i < len(r.b) {
		var err error
		if r.b[r.i] == '<' {
			err = r.markup()
		} else {
			err = r.chardata()
		}
		if err != nil {
			return nil, fmt.Errorf("%w: at byte %d: %w", errXML, r.i, err)
		}
	}
	switch {
	case len(r.stack) > 0:
		return nil, fmt.Errorf("%w: ends inside %s", errXML, r.stack[len(r.stack)-1].name)
	case r.root == nil:
		return nil, fmt.Errorf("%w: no element", errXML)
	}
	return r.root, nil
}

// markup reads what starts at '<'.
func (r *xmlReader) markup() error {
	rest := r.b[r.i:]
	switch {
	case hasPrefix(rest, "<?"):
		return r.procInst()
	case hasPrefix(rest, "<!--"):
		end := indexOf(rest[4:], "--")
		if end < 0 || !hasPrefix(rest[4+end:], "-->") {
			return errors.New("comment not closed by --> (or -- inside it)")
		}
		if err := checkText(rest[4 : 4+end]); err != nil {
			return err
		}
		r.i += 4 + end + 3
		return nil
	case hasPrefix(rest, "<![CDATA["):
		end := indexOf(rest[9:], "]]>")
		if end < 0 {
			return errors.New("CDATA section not closed")
		}
		if len(r.stack) == 0 {
			return errors.New("CDATA outside the root element")
		}
		raw := rest[9 : 9+end]
		if err := checkText(raw); err != nil {
			return err
		}
		r.addText(string(normalizeNewlines(raw)))
		r.i += 9 + end + 3
		return nil
	case hasPrefix(rest, "<!"):
		return errors.New("a DOCTYPE or other declaration")
	case hasPrefix(rest, "</"):
		return r.endTag()
	default:
		return r.startTag()
	}
}

// procInst skips a processing instruction; the XML declaration must say version
// 1.0 and, if it names one, the UTF-8 encoding.
func (r *xmlReader) procInst() error {
	rest := r.b[r.i+2:]
	end := indexOf(rest, "?>")
	if end < 0 {
		return errors.New("processing instruction not closed")
	}
	body := rest[:end]
	if err := checkText(body); err != nil {
		return err
	}
	n := nameLen(body)
	if n == 0 {
		return errors.New("processing instruction without a target")
	}
	target := string(body[:n])
	if n < len(body) && !isSpace(body[n]) {
		return fmt.Errorf("processing instruction %s: want white space after the target", target)
	}
	if strings.EqualFold(target, "xml") {
		if target != "xml" || r.i != 0 {
			return errors.New("XML declaration not at the start")
		}
		content := string(body[n:])
		if v := declParam(content, "version"); v != "" && v != "1.0" {
			return fmt.Errorf("XML version %q, want 1.0", quoteShort(v))
		}
		if enc := declParam(content, "encoding"); enc != "" && !strings.EqualFold(enc, "utf-8") {
			return fmt.Errorf("encoding %q, want UTF-8", quoteShort(enc))
		}
	}
	r.i += 2 + end + 2
	return nil
}

// declParam returns the value of name="value" (or 'value') in an XML
// declaration's content: the first name= followed by a quote, as encoding/xml
// reads it ("" when there is none).
func declParam(s, name string) string {
	param := name + "="
	for {
		k := strings.Index(s, param)
		if k < 0 || k+len(param) >= len(s) {
			return ""
		}
		s = s[k+len(param):]
		if q := s[0]; q == '"' || q == '\'' {
			end := strings.IndexByte(s[1:], q)
			if end < 0 {
				return ""
			}
			return s[1 : 1+end]
		}
	}
}

// startTag reads <name attr="v"...> or <name.../>.
func (r *xmlReader) startTag() error {
	r.i++
	name, err := r.name()
	if err != nil {
		return err
	}
	for {
		r.skipSpace()
		if r.i >= len(r.b) {
			return fmt.Errorf("tag %s not closed", name)
		}
		switch r.b[r.i] {
		case '>':
			r.i++
			return r.open(name, false)
		case '/':
			if r.i+1 >= len(r.b) || r.b[r.i+1] != '>' {
				return fmt.Errorf("tag %s: '/' not followed by '>'", name)
			}
			r.i += 2
			return r.open(name, true)
		default:
			if err := r.attribute(name); err != nil {
				return err
			}
		}
	}
}

// attribute reads name="value" (or 'value'); the value is checked, not kept.
func (r *xmlReader) attribute(tag string) error {
	start := r.i
	n := nameLen(r.b[r.i:])
	if n == 0 {
		return fmt.Errorf("tag %s: bad attribute", tag)
	}
	if r.i+n < len(r.b) && r.b[r.i+n] != '=' && !isSpace(r.b[r.i+n]) {
		return fmt.Errorf("tag %s: bad attribute name", tag)
	}
	r.i += n
	if an := r.b[start : start+n]; an[0] == ':' || an[n-1] == ':' || bytes.Count(an, []byte(":")) > 1 {
		return fmt.Errorf("tag %s: bad attribute name", tag)
	}
	r.skipSpace()
	if r.i >= len(r.b) || r.b[r.i] != '=' {
		return fmt.Errorf("tag %s: attribute without '='", tag)
	}
	r.i++
	r.skipSpace()
	if r.i >= len(r.b) || (r.b[r.i] != '"' && r.b[r.i] != '\'') {
		return fmt.Errorf("tag %s: attribute value not quoted", tag)
	}
	q := r.b[r.i]
	end := -1
	for j := r.i + 1; j < len(r.b); j++ {
		if r.b[j] == q {
			end = j
			break
		}
	}
	if end < 0 {
		return fmt.Errorf("tag %s: attribute value not closed", tag)
	}
	v := r.b[r.i+1 : end]
	if indexOf(v, "<") >= 0 {
		return fmt.Errorf("tag %s: '<' in an attribute value", tag)
	}
	if _, err := unescape(v); err != nil {
		return err
	}
	r.i = end + 1
	if r.i < len(r.b) && !isSpace(r.b[r.i]) && r.b[r.i] != '>' && r.b[r.i] != '/' {
		return fmt.Errorf("tag %s: want white space between attributes", tag)
	}
	return nil
}

// open adds an element named name under the current one.
func (r *xmlReader) open(name string, closed bool) error {
	if len(r.stack) == 0 && r.root != nil {
		return fmt.Errorf("a second root element %s", name)
	}
	if len(r.stack) >= maxDepth {
		return fmt.Errorf("elements nested deeper than %d", maxDepth)
	}
	if r.count++; r.count > maxElements {
		return fmt.Errorf("more than %d elements", maxElements)
	}
	e := &element{name: name}
	if len(r.stack) == 0 {
		r.root = e
	} else {
		top := r.stack[len(r.stack)-1]
		top.kids = append(top.kids, e)
	}
	if !closed {
		r.stack = append(r.stack, e)
	}
	return nil
}

// endTag reads </name>, which must close the innermost open element.
func (r *xmlReader) endTag() error {
	r.i += 2
	name, err := r.name()
	if err != nil {
		return err
	}
	r.skipSpace()
	if r.i >= len(r.b) || r.b[r.i] != '>' {
		return fmt.Errorf("end tag %s not closed", name)
	}
	r.i++
	if len(r.stack) == 0 {
		return fmt.Errorf("end tag %s without a start", name)
	}
	if top := r.stack[len(r.stack)-1]; top.name != name {
		return fmt.Errorf("end tag %s closes %s", name, top.name)
	}
	r.stack = r.stack[:len(r.stack)-1]
	return nil
}

// name reads an element name: ASCII letters, digits, '_', '-' and '.', not
// starting with a digit, '-' or '.' (no namespace prefix).
func (r *xmlReader) name() (string, error) {
	n := nameLen(r.b[r.i:])
	if n == 0 {
		return "", errors.New("want an element name")
	}
	s := string(r.b[r.i : r.i+n])
	if strings.IndexByte(s, ':') >= 0 {
		return "", fmt.Errorf("element %s: namespace prefixes are not read", s)
	}
	if r.i+n < len(r.b) {
		if c := r.b[r.i+n]; !isSpace(c) && c != '>' && c != '/' {
			return "", fmt.Errorf("element %s: bad character after the name", s)
		}
	}
	r.i += n
	return s, nil
}

// nameLen returns the length of the name at the start of b (0 if none).
func nameLen(b []byte) int {
	n := 0
	for n < len(b) {
		c := b[n]
		letter := c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && (n == 0 || (c != '-' && c != '.' && (c < '0' || c > '9'))) {
			break
		}
		n++
	}
	return n
}

// chardata reads text up to the next '<'.
func (r *xmlReader) chardata() error {
	end := indexOf(r.b[r.i:], "<")
	if end < 0 {
		end = len(r.b) - r.i
	}
	raw := r.b[r.i : r.i+end]
	if len(r.stack) == 0 {
		for _, c := range raw {
			if !isSpace(c) {
				return errors.New("text outside the root element")
			}
		}
		r.i += end
		return nil
	}
	if indexOf(raw, "]]>") >= 0 {
		return errors.New("]]> outside a CDATA section")
	}
	s, err := unescape(normalizeNewlines(raw))
	if err != nil {
		return err
	}
	r.addText(s)
	r.i += end
	return nil
}

// addText appends s to the innermost open element's text.
func (r *xmlReader) addText(s string) {
	top := r.stack[len(r.stack)-1]
	top.text += s
}

// unescape checks raw text and replaces its entity and character references.
func unescape(raw []byte) (string, error) {
	if err := checkText(raw); err != nil {
		return "", err
	}
	if indexOf(raw, "&") < 0 {
		return string(raw), nil
	}
	var sb strings.Builder
	for len(raw) > 0 {
		amp := indexOf(raw, "&")
		if amp < 0 {
			sb.Write(raw)
			break
		}
		sb.Write(raw[:amp])
		raw = raw[amp+1:]
		semi := indexOf(raw, ";")
		if semi < 0 || semi > 16 {
			return "", errors.New("'&' not starting a reference")
		}
		ref := string(raw[:semi])
		raw = raw[semi+1:]
		switch ref {
		case "amp":
			sb.WriteByte('&')
		case "lt":
			sb.WriteByte('<')
		case "gt":
			sb.WriteByte('>')
		case "quot":
			sb.WriteByte('"')
		case "apos":
			sb.WriteByte('\'')
		default:
			num, ok := strings.CutPrefix(ref, "#")
			if !ok || num == "" {
				return "", fmt.Errorf("entity &%s; is not one of XML's five", quoteShort(ref))
			}
			base := 10
			if hex, ok := strings.CutPrefix(num, "x"); ok {
				num, base = hex, 16
			}
			n, err := strconv.ParseUint(num, base, 32)
			if err != nil || num[0] == '+' || !isXMLChar(rune(n)) {
				return "", fmt.Errorf("character reference &%s; is not an XML character", quoteShort(ref))
			}
			sb.WriteRune(rune(n))
		}
	}
	return sb.String(), nil
}

// checkText refuses invalid UTF-8 and characters XML does not allow.
func checkText(b []byte) error {
	for len(b) > 0 {
		c, size := utf8.DecodeRune(b)
		if c == utf8.RuneError && size == 1 {
			return errors.New("invalid UTF-8")
		}
		if !isXMLChar(c) {
			return fmt.Errorf("character U+%04X is not allowed in XML", c)
		}
		b = b[size:]
	}
	return nil
}

// isXMLChar reports whether c is in XML 1.0's Char production.
func isXMLChar(c rune) bool {
	return c == 0x09 || c == 0x0A || c == 0x0D ||
		(c >= 0x20 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF)
}

// normalizeNewlines reads \r\n and a lone \r of raw text as \n, as XML parsers
// do (a character reference &#13; stays \r).
func normalizeNewlines(b []byte) []byte {
	if bytes.IndexByte(b, '\r') < 0 {
		return b
	}
	return bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
}

func (r *xmlReader) skipSpace() {
	for r.i < len(r.b) && isSpace(r.b[r.i]) {
		r.i++
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func hasPrefix(b []byte, p string) bool { return bytes.HasPrefix(b, []byte(p)) }

func indexOf(b []byte, s string) int { return bytes.Index(b, []byte(s)) }
