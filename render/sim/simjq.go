package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// jqValue is a JSON value that keeps its objects' key order, as jq does.
type jqValue struct {
	obj  []jqMember // an object when isObj
	raw  json.RawMessage
	isOb bool
}

type jqMember struct {
	key string
	val jqValue
}

func decodeJQ(dec *json.Decoder) (jqValue, error) {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return jqValue{}, err
	}
	return fromRaw(raw)
}

func fromRaw(raw json.RawMessage) (jqValue, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' {
		return jqValue{raw: t}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	if _, err := dec.Token(); err != nil {
		return jqValue{}, err
	}
	v := jqValue{isOb: true}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return jqValue{}, err
		}
		var m json.RawMessage
		if err := dec.Decode(&m); err != nil {
			return jqValue{}, err
		}
		mv, err := fromRaw(m)
		if err != nil {
			return jqValue{}, err
		}
		v.set(k.(string), mv)
	}
	return v, nil
}

func (v *jqValue) set(k string, x jqValue) {
	for i := range v.obj {
		if v.obj[i].key == k {
			v.obj[i].val = x
			return
		}
	}
	v.obj = append(v.obj, jqMember{k, x})
}

func (v jqValue) get(k string) (jqValue, bool) {
	for _, m := range v.obj {
		if m.key == k {
			return m.val, true
		}
	}
	return jqValue{raw: json.RawMessage("null")}, false
}

// merge is jq's `a * b`: objects merged recursively, b winning elsewhere.
func merge(a, b jqValue) jqValue {
	if !a.isOb || !b.isOb {
		return b
	}
	out := jqValue{isOb: true, obj: append([]jqMember{}, a.obj...)}
	for _, m := range b.obj {
		if old, ok := out.get(m.key); ok {
			out.set(m.key, merge(old, m.val))
		} else {
			out.set(m.key, m.val)
		}
	}
	return out
}

// format writes v as jq prints it: two-space indent, or compact.
func (v jqValue) format(b *bytes.Buffer, indent string, compact bool) {
	if !v.isOb {
		var out bytes.Buffer
		var err error
		if compact {
			err = json.Compact(&out, v.raw)
		} else {
			err = json.Indent(&out, v.raw, indent, "  ")
		}
		if err != nil {
			b.Write(v.raw)
			return
		}
		b.Write(out.Bytes())
		return
	}
	if len(v.obj) == 0 {
		b.WriteString("{}")
		return
	}
	b.WriteByte('{')
	for i, m := range v.obj {
		if i > 0 {
			b.WriteByte(',')
		}
		if !compact {
			b.WriteString("\n" + indent + "  ")
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		if !compact {
			b.WriteByte(' ')
		}
		m.val.format(b, indent+"  ", compact)
	}
	if !compact {
		b.WriteString("\n" + indent)
	}
	b.WriteByte('}')
}

// jqOpts are the options of jq that are simulated.
type jqOpts struct {
	slurp, raw, compact bool
	prog                string
	files               []string
}

// parseJQ reads jq's arguments; ok is false for an option or program not simulated:
// `.`, a path such as `.a.b`, and `-s '.[0] * .[1]'`.
func parseJQ(args []string) (jqOpts, bool) {
	var o jqOpts
	flags := map[rune]*bool{'s': &o.slurp, 'r': &o.raw, 'c': &o.compact, 'e': new(bool), 'M': new(bool)}
	for _, a := range args {
		switch {
		case o.prog == "" && strings.HasPrefix(a, "--"):
			return o, false
		case o.prog == "" && len(a) > 1 && a[0] == '-':
			for _, c := range a[1:] {
				f, ok := flags[c]
				if !ok {
					return o, false
				}
				*f = true
			}
		case o.prog == "":
			o.prog = strings.TrimSpace(a)
		default:
			o.files = append(o.files, a)
		}
	}
	if o.slurp {
		return o, o.merge()
	}
	return o, o.prog == "." || jqPath().MatchString(o.prog)
}

func (o jqOpts) merge() bool { return o.slurp && (o.prog == ".[0] * .[1]" || o.prog == ".[0]*.[1]") }

// toolJQ is jq for the programs launch tools' scripts use (parseJQ); anything else
// is not simulated.
func toolJQ(t *toolCtx, args []string) error {
	o, ok := parseJQ(args)
	if !ok {
		return t.unsupported(args)
	}
	in, st := t.input(o.files)
	if st != 0 {
		return statusErr(2)
	}
	dec := json.NewDecoder(bytes.NewReader(in))
	var vals []jqValue
	for dec.More() {
		v, err := decodeJQ(dec)
		if err != nil {
			fmt.Fprintf(t.hc.Stderr, "jq: error (at <stdin>): %v\n", err)
			return statusErr(2)
		}
		vals = append(vals, v)
	}
	var results []jqValue
	switch {
	case o.merge() && len(vals) == 2:
		results = []jqValue{merge(vals[0], vals[1])}
	case o.merge():
		return t.unsupported(args)
	case o.prog == ".":
		results = vals
	default:
		for _, v := range vals {
			cur := v
			for _, k := range strings.Split(o.prog[1:], ".") {
				cur, _ = cur.get(k)
			}
			results = append(results, cur)
		}
	}
	var b bytes.Buffer
	for _, r := range results {
		var str string
		if o.raw && !r.isOb && len(r.raw) > 0 && r.raw[0] == '"' && json.Unmarshal(r.raw, &str) == nil {
			b.WriteString(str)
		} else {
			r.format(&b, "", o.compact)
		}
		b.WriteByte('\n')
	}
	return t.write(b.Bytes())
}
