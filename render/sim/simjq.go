package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/itchyny/gojq"
)

// jq is simulated by github.com/itchyny/gojq, the whole jq language, with one
// difference from jq that matters to bash: gojq keeps objects as maps, sorted by key,
// where jq keeps their keys in the order read. So the order is restored when the
// output is printed (each key where it first appeared in the input, keys the program
// made after them), and refused, naming jq, where it cannot be: an output object
// whose keys the input had in different orders, or a program that iterates
// over an input object whose keys are not sorted (.[], to_entries, keys_unsorted,
// tojson and their kin).

// jqOpts are the options of jq that are simulated.
type jqOpts struct {
	slurp, raw, compact, join, null, exit, tab, sortKeys bool
	prog                                                 string
	files                                                []string
	names                                                []string
	values                                               []any
}

func parseJQ(args []string) (jqOpts, string) {
	var o jqOpts
	flags := map[rune]*bool{'s': &o.slurp, 'r': &o.raw, 'c': &o.compact, 'j': &o.join, 'n': &o.null, 'e': &o.exit, 'S': &o.sortKeys, 'M': new(bool), 'C': new(bool)}
	long := map[string]*bool{
		"--slurp": &o.slurp, "--raw-output": &o.raw, "--compact-output": &o.compact, "--join-output": &o.join,
		"--null-input": &o.null, "--exit-status": &o.exit, "--tab": &o.tab, "--sort-keys": &o.sortKeys, "--monochrome-output": new(bool),
	}
	progSet := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--arg" || a == "--argjson":
			if i+2 >= len(args) {
				return o, a + " without a name and value"
			}
			v := any(args[i+2])
			if a == "--argjson" {
				if err := json.Unmarshal([]byte(args[i+2]), &v); err != nil {
					return o, "--argjson with a value that is not JSON"
				}
				v = normalize(v)
			}
			o.names, o.values = append(o.names, "$"+args[i+1]), append(o.values, v)
			i += 2
		case strings.HasPrefix(a, "--") && long[a] != nil:
			*long[a] = true
		case strings.HasPrefix(a, "--"):
			return o, "the option " + a
		case len(a) > 1 && a[0] == '-':
			for _, c := range a[1:] {
				f, ok := flags[c]
				if !ok {
					return o, "the option -" + string(c)
				}
				*f = true
			}
		case !progSet:
			o.prog, progSet = a, true
		default:
			o.files = append(o.files, a)
		}
	}
	if !progSet {
		return o, "jq without a program"
	}
	return o, ""
}

// normalize makes encoding/json's numbers gojq's (int where integral).
func normalize(v any) any {
	switch v := v.(type) {
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int(v)
		}
	case []any:
		for i := range v {
			v[i] = normalize(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = normalize(v[k])
		}
	}
	return v
}

// keyOrder is where each key first appeared in the input, and which keys the input
// had in different orders.
type keyOrder struct {
	index    map[string]int
	unsorted bool                // an input object's keys were not sorted
	objects  map[string][]string // an input object's keys, by its sorted keys
	twice    map[string]bool     // key sets the input has in two orders
}

// decode reads the JSON values of in, noting the order of their objects' keys.
func (ko *keyOrder) decode(in []byte) ([]any, error) {
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.UseNumber()
	var vals []any
	for {
		v, err := ko.value(dec)
		if err == io.EOF {
			return vals, nil
		}
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
	}
}

func (ko *keyOrder) value(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := map[string]any{}
			var keys []string
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := k.(string)
				v, err := ko.value(dec)
				if err != nil {
					return nil, err
				}
				m[key] = v
				keys = append(keys, key)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			ko.note(keys)
			return m, nil
		case '[':
			a := []any{}
			for dec.More() {
				v, err := ko.value(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return a, nil
		}
	case json.Number:
		if i, err := strconv.Atoi(t.String()); err == nil {
			return i, nil
		}
		if b, ok := new(big.Int).SetString(t.String(), 10); ok {
			return b, nil
		}
		f, err := t.Float64()
		return f, err
	}
	return tok, nil
}

func (ko *keyOrder) note(keys []string) {
	if !sort.StringsAreSorted(keys) {
		ko.unsorted = true
	}
	for _, k := range keys {
		if _, ok := ko.index[k]; !ok {
			ko.index[k] = len(ko.index)
		}
	}
	sig := keySet(keys)
	if old, ok := ko.objects[sig]; ok && strings.Join(old, "\x00") != strings.Join(keys, "\x00") {
		ko.twice[sig] = true
	}
	ko.objects[sig] = keys
}

// keySet names a set of keys whatever their order.
func keySet(keys []string) string {
	s := append([]string{}, keys...)
	sort.Strings(s)
	return strings.Join(s, "\x00")
}

// iterating finds the jq builtins and forms that see an object's keys in order.
var iteratingRE lazy[*regexp.Regexp]

func iterating() *regexp.Regexp {
	return iteratingRE.get(func() *regexp.Regexp {
		return regexp.MustCompile(`\[\s*\]|\bto_entries\b|\bwith_entries\b|\bkeys_unsorted\b|\bmap_values\b|\.\.|\bpaths\b|\btostream\b|\btojson\b|@json|@text|@csv|@tsv|@sh|\badd\b|\bleaf_paths\b|\bgetpath\b|\bpick\b|\bany\b|\ball\b|\bmin_by\b|\bmax_by\b|\bfirst\b|\blast\b|\blimit\b|\bnth\b|\buntil\b|\brecurse\b|\bwalk\b|\benv\b|\$ENV|\binput|\bdebug\b|\bstderr\b|\btostring\b|\bascii\b|\bimplode\b|\bsplits\b|\bltrimstr\b|\brtrimstr\b|\bdel\b|\bto_array\b|\bfrom_entries\b`)
	})
}

// toolJQ is jq (gojq's language) over the simulated files and pipes.
func toolJQ(t *toolCtx, args []string) error {
	o, bad := parseJQ(args)
	if bad != "" {
		return t.s.refuseTool(t, "jq: "+bad)
	}
	q, err := gojq.Parse(o.prog)
	if err != nil {
		fmt.Fprintf(t.hc.Stderr, "jq: error: %v\njq: 1 compile error\n", err)
		return statusErr(3)
	}
	code, err := gojq.Compile(q, gojq.WithVariables(o.names), gojq.WithEnvironLoader(func() []string { return nil }))
	if err != nil {
		fmt.Fprintf(t.hc.Stderr, "jq: error: %v\njq: 1 compile error\n", err)
		return statusErr(3)
	}
	in, st := t.input(o.files)
	if st != 0 {
		return statusErr(2)
	}
	ko := &keyOrder{index: map[string]int{}, objects: map[string][]string{}, twice: map[string]bool{}}
	vals, err := ko.decode(in)
	if err != nil {
		fmt.Fprintf(t.hc.Stderr, "jq: error (at <stdin>:0): Cannot parse input: %v\n", err)
		return statusErr(2)
	}
	if ko.unsorted && !o.sortKeys && iterating().MatchString(o.prog) {
		return t.s.refuseTool(t, "jq "+shorten(o.prog, 40)+" over an object whose keys are not sorted (gojq, which render runs, sorts them where jq keeps their order)")
	}
	switch {
	case o.null:
		vals = []any{nil}
	case o.slurp:
		vals = []any{append([]any{}, vals...)}
	}
	var b bytes.Buffer
	status := uint8(0)
	var last any = true
	for _, v := range vals {
		iter := code.RunWithContext(t.ctx, v, o.values...)
		for {
			r, ok := iter.Next()
			if !ok {
				break
			}
			if err, ok := r.(error); ok {
				var he *gojq.HaltError
				if asHalt(err, &he) {
					return statusErr(uint8(he.ExitCode()))
				}
				fmt.Fprintf(t.hc.Stderr, "jq: error (at <stdin>:0): %v\n", err)
				status = 5
				break
			}
			last = r
			if s, ok := r.(string); ok && (o.raw || o.join) {
				b.WriteString(s)
			} else if err := (&jqEncoder{b: &b, ko: ko, compact: o.compact, tab: o.tab, sort: o.sortKeys, prog: o.prog}).encode(r, ""); err != nil {
				return t.s.refuseTool(t, "jq "+shorten(o.prog, 40)+": "+err.Error())
			}
			if !o.join {
				b.WriteByte('\n')
			}
			if b.Len() > t.s.opts.Limits.Output {
				return t.s.stop(&LimitError{What: fmt.Sprintf("jq output of more than %d bytes (%s)", t.s.opts.Limits.Output, t.at)})
			}
		}
	}
	if err := t.write(b.Bytes()); err != nil {
		return err
	}
	if o.exit && status == 0 && (last == nil || last == false) {
		status = 1
	}
	return statusErr2(status)
}

func statusErr2(code uint8) error {
	if code == 0 {
		return nil
	}
	return statusErr(code)
}

func asHalt(err error, he **gojq.HaltError) bool {
	h, ok := err.(*gojq.HaltError)
	if ok {
		*he = h
	}
	return ok
}

// jqEncoder prints values as jq does: two-space indentation (or a tab, or compact),
// keys in the input's order, strings escaped as jq escapes them.
type jqEncoder struct {
	b                  *bytes.Buffer
	ko                 *keyOrder
	compact, tab, sort bool
	// prog is the program, which names the keys it makes in the order jq adds them
	// (madeOrder).
	prog string
}

func (e *jqEncoder) encode(v any, indent string) error {
	step := "  "
	if e.tab {
		step = "\t"
	}
	switch v := v.(type) {
	case nil:
		e.b.WriteString("null")
	case bool:
		e.b.WriteString(strconv.FormatBool(v))
	case int:
		e.b.WriteString(strconv.Itoa(v))
	case *big.Int:
		e.b.WriteString(v.String())
	case float64:
		e.b.WriteString(jqNumber(v))
	case json.Number:
		e.b.WriteString(v.String())
	case string:
		jqString(e.b, v)
	case []any:
		if len(v) == 0 {
			e.b.WriteString("[]")
			return nil
		}
		e.b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				e.b.WriteByte(',')
			}
			if !e.compact {
				e.b.WriteString("\n" + indent + step)
			}
			if err := e.encode(x, indent+step); err != nil {
				return err
			}
		}
		if !e.compact {
			e.b.WriteString("\n" + indent)
		}
		e.b.WriteByte(']')
	case map[string]any:
		if len(v) == 0 {
			e.b.WriteString("{}")
			return nil
		}
		keys, err := e.order(v)
		if err != nil {
			return err
		}
		e.b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				e.b.WriteByte(',')
			}
			if !e.compact {
				e.b.WriteString("\n" + indent + step)
			}
			jqString(e.b, k)
			e.b.WriteByte(':')
			if !e.compact {
				e.b.WriteByte(' ')
			}
			if err := e.encode(v[k], indent+step); err != nil {
				return err
			}
		}
		if !e.compact {
			e.b.WriteString("\n" + indent)
		}
		e.b.WriteByte('}')
	default:
		return fmt.Errorf("a value of type %T", v)
	}
	return nil
}

// order is the keys of m as jq would print them: as an input object with the same
// keys had them, else each where it first appeared in the input (jq's * and + keep
// the left object's order, then the right's new keys: the input's first-seen order
// when the documents are merged in the order read), keys the program made last.
func (e *jqEncoder) order(m map[string]any) ([]string, error) {
	keys := make([]string, 0, len(m))
	made := 0
	for k := range m {
		keys = append(keys, k)
		if _, ok := e.ko.index[k]; !ok {
			made++
		}
	}
	sort.Strings(keys)
	if e.sort || len(keys) < 2 {
		return keys, nil
	}
	sig := strings.Join(keys, "\x00")
	if e.ko.twice[sig] {
		return nil, fmt.Errorf("an object whose keys the input has in different orders (gojq, which render runs, sorts them where jq keeps their order)")
	}
	if in, ok := e.ko.objects[sig]; ok {
		return in, nil
	}
	at := map[string]int{}
	if made > 1 {
		for _, k := range keys {
			if _, ok := e.ko.index[k]; ok {
				continue
			}
			i, ok := madeAt(e.prog, k)
			if !ok {
				return nil, fmt.Errorf("an object with keys the program made (gojq, which render runs, sorts them where jq keeps the program's order)")
			}
			at[k] = i
		}
	}
	sort.SliceStable(keys, func(i, j int) bool {
		a, aok := e.ko.index[keys[i]]
		b, bok := e.ko.index[keys[j]]
		switch {
		case aok && bok:
			return a < b
		case aok != bok:
			return aok
		}
		return at[keys[i]] < at[keys[j]]
	})
	return keys, nil
}

// madeAt is where a key the program made is named in it, when the program names it
// once and only once (.key, ."key", {key: ...}, {"key": ...}): jq adds the keys an
// assignment or an object construction makes in the order the program runs them,
// which for such a program (`.kubeAPIQPS=50 | .kubeAPIBurst=100`) is the order it
// names them. A key it names twice, or not at all (made from a variable or a
// computed name), has no known place: the object is refused. The program is read as
// its tokens: a string literal is one (its text whole: "memory.available" names
// neither memory nor available), an identifier one, a $variable none.
func madeAt(prog, key string) (int, bool) {
	first, n := -1, 0
	found := func(at int, tok string) {
		if tok == key {
			if n++; first < 0 {
				first = at
			}
		}
	}
	for i := 0; i < len(prog); {
		c := prog[i]
		switch {
		case c == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(prog) && prog[j] != '"'; j++ {
				if prog[j] == '\\' && j+1 < len(prog) {
					j++
				}
				b.WriteByte(prog[j])
			}
			found(i, b.String())
			i = j + 1
		case c == '$':
			for i++; i < len(prog) && isJQWordByte(prog[i]); i++ {
			}
		case isJQWordByte(c):
			j := i
			for ; j < len(prog) && isJQWordByte(prog[j]); j++ {
			}
			found(i, prog[i:j])
			i = j
		default:
			i++
		}
	}
	return first, n == 1
}

func isJQWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// jqNumber prints a float as jq 1.6 and 1.7 do for the values scripts meet.
func jqNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "null"
	case math.IsInf(f, 1):
		return "1.7976931348623157e+308"
	case math.IsInf(f, -1):
		return "-1.7976931348623157e+308"
	case f == math.Trunc(f) && math.Abs(f) < 1e17:
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}

// jqString writes s as a JSON string, escaped as jq escapes it.
func jqString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(b, `\u%04x`, r)
		case r == utf8.RuneError && n == 1:
			b.WriteString("\ufffd")
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	b.WriteByte('"')
}
