// Package yamljson turns a YAML document into JSON as sigs.k8s.io/yaml's
// YAMLToJSON does (the conversion nodeadm, kubectl and the kubelet use), with
// go.yaml.in/yaml/v3's parser only.
//
// Why: sigs.k8s.io/yaml decodes with go.yaml.in/yaml/v2, and eksboot already links
// v3 (NodeConfig's duplicate-key and depth walk, render's cloud-config). Two YAML
// libraries cost every start about 0.16 ms of package initialisation (v2's
// resolve tables) and 150 KB of binary (docs/performance.md). v3 alone will not do
// as a decoder: it resolves scalars by YAML 1.2, where yes, on, y and 0777 are a
// string, a string, a string and 777, but NodeConfig user data has always been read
// by YAML 1.1's rules (true, true, true, 511), as nodeadm reads it. So ToJSON parses
// with v3 into its node tree and then resolves each scalar, merge key and alias by
// v2's rules, and names map keys as sigs.k8s.io/yaml does. The tests hold it to
// sigs.k8s.io/yaml (a test dependency only): the same JSON, or an error where it
// gives one, for the seeds and a fuzz target.
//
// The one rule of its own is a bound on what a document may expand to
// (MaxBytes, MaxNodes), checked as its aliases and merge keys are expanded:
// v2's rule against excessive aliasing counts values, not bytes, so a string of
// 35 KB anchored once and aliased through a list 70,000 times passed it and
// made 2.4 GB of JSON from 56 KB of user data.
package yamljson

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	yamlv3 "go.yaml.in/yaml/v3"
)

// ToJSON converts the first YAML document of y to JSON: mappings to objects with
// their keys in order, sequences to arrays, scalars by YAML 1.1's rules (as
// go.yaml.in/yaml/v2 resolves them), merge keys (<<) and aliases expanded. An empty
// document is null.
//
// One difference from sigs.k8s.io/yaml is known: a scalar with the non-specific
// tag "!" (`! 12`) is resolved as if it had no tag (12), where v2 kept it a
// string ("12"); v3's node tree does not keep that tag.
//
// A document larger, with its aliases and merge keys expanded, than MaxBytes of
// JSON or MaxNodes values is an *ExpansionError, found while it is expanded.
func ToJSON(y []byte) ([]byte, error) {
	var root yamlv3.Node
	if err := yamlv3.Unmarshal(y, &root); err != nil {
		return nil, &ParseError{err}
	}
	return NodeToJSON(&root)
}

// NodeToJSON is ToJSON of a document its caller parsed (yamlv3.Unmarshal into
// root), for one that walks the node tree too and would otherwise parse it twice.
func NodeToJSON(root *yamlv3.Node) ([]byte, error) {
	c := &converter{active: map[*yamlv3.Node]bool{}}
	v, err := c.value(root)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// The bounds of an expanded document. No NodeConfig comes near them: user data
// is at most 1 MiB decoded (userdata.MaxDecoded), a drop-in 64 KiB, and what
// becomes a file is bounded again by its renderer; the bounds keep the decoding
// of one document, its values and its JSON, within a few tens of MiB.
const (
	// MaxBytes bounds the JSON a document converts to (strings counted with
	// their escapes).
	MaxBytes = 4 << 20
	// MaxNodes bounds the values a document holds: scalars, sequences, mappings
	// and map keys, each alias counted as what it stands for.
	MaxNodes = 100_000
)

// ExpansionError is a document that, with its aliases and merge keys expanded,
// passes one of the bounds: MaxBytes of JSON, MaxNodes values, or the share of
// values made by aliases that go.yaml.in/yaml/v2 allows (a "billion laughs").
type ExpansionError struct {
	Bound Bound
	// Limit is the bound passed: bytes, values, or the percentage of aliased
	// values allowed.
	Limit int
}

// Bound names one of the bounds of an expanded document.
type Bound int

// The bounds of an expanded document.
const (
	BoundBytes   Bound = iota + 1 // MaxBytes
	BoundNodes                    // MaxNodes
	BoundAliases                  // v2's share of aliased values
)

func (e *ExpansionError) Error() string {
	switch e.Bound {
	case BoundNodes:
		return fmt.Sprintf("expands to more than %d values with its aliases and merge keys expanded (the bound)", e.Limit)
	case BoundAliases:
		return fmt.Sprintf("expands out of proportion: more than %d%% of its values come from aliases (the bound, go.yaml.in/yaml/v2's)", e.Limit)
	}
	return fmt.Sprintf("expands to more than %d bytes of JSON with its aliases and merge keys expanded (the bound, %d MiB)", e.Limit, e.Limit>>20)
}

// CheckExpansion parses y, the first YAML document in it, and returns an
// *ExpansionError when it expands past MaxBytes or MaxNodes as ToJSON would
// expand it, for a document decoded by another decoder (render's cloud-config,
// with yaml/v3's own rules). It builds no values: the expanded size of each node
// is worked out once and stops counting past the bounds. A document the parser
// refuses is left to the decoder to report.
func CheckExpansion(y []byte) error {
	var root yamlv3.Node
	if err := yamlv3.Unmarshal(y, &root); err != nil {
		return nil
	}
	m := sizer{memo: map[*yamlv3.Node]size{}, active: map[*yamlv3.Node]bool{}}
	s := m.size(&root)
	switch {
	case s.nodes > MaxNodes:
		return &ExpansionError{Bound: BoundNodes, Limit: MaxNodes}
	case s.bytes > MaxBytes:
		return &ExpansionError{Bound: BoundBytes, Limit: MaxBytes}
	}
	return nil
}

// size is the expanded size of a node: its values and about the bytes of its
// JSON (scalars as their text, quoted).
type size struct{ nodes, bytes int }

// sizer works out expanded sizes, each node's once.
type sizer struct {
	memo   map[*yamlv3.Node]size
	active map[*yamlv3.Node]bool // a cycle of aliases counts nothing more
}

func (m *sizer) size(n *yamlv3.Node) size {
	if s, ok := m.memo[n]; ok {
		return s
	}
	if m.active[n] {
		return size{}
	}
	m.active[n] = true
	s := size{nodes: 1}
	switch n.Kind {
	case yamlv3.AliasNode:
		if n.Alias != nil {
			s = m.size(n.Alias)
		}
	case yamlv3.ScalarNode:
		s.bytes = jsonStringLen(n.Value)
	default:
		s.bytes = 2
		for _, c := range n.Content {
			cs := m.size(c)
			s.nodes = min(s.nodes+cs.nodes, MaxNodes+1)
			s.bytes = min(s.bytes+cs.bytes+1, MaxBytes+1)
		}
	}
	delete(m.active, n)
	m.memo[n] = s
	return s
}

// ParseError is v3's parser refusing the document. v3's parser is v2's with
// fixes, so it refuses some malformed documents v2 read as something.
type ParseError struct{ Err error }

func (e *ParseError) Error() string { return e.Err.Error() }

// Unwrap returns the parser's error.
func (e *ParseError) Unwrap() error { return e.Err }

// Unmarshal converts y with ToJSON and decodes the JSON into v with encoding/json,
// as sigs.k8s.io/yaml's Unmarshal does.
func Unmarshal(y []byte, v any) error {
	j, err := ToJSON(y)
	if err != nil {
		return err
	}
	return json.Unmarshal(j, v)
}

// converter holds the alias bookkeeping of one document.
type converter struct {
	active     map[*yamlv3.Node]bool // aliases being expanded (a cycle is an error)
	aliasDepth int
	nodes      int // values made
	aliased    int // values made inside an alias
	bytes      int // bytes of JSON the values made so far convert to
}

// grow counts n more bytes of JSON and fails past MaxBytes.
func (c *converter) grow(n int) error {
	if c.bytes += n; c.bytes > MaxBytes {
		return &ExpansionError{Bound: BoundBytes, Limit: MaxBytes}
	}
	return nil
}

// aliasRatio is the share of aliased values v2 allows in a document of n values:
// 99% up to 400,000, falling to 10% at 4,000,000 and beyond.
func aliasRatio(n int) float64 {
	const low, high = 400_000, 4_000_000
	switch {
	case n <= low:
		return 0.99
	case n >= high:
		return 0.10
	default:
		return 0.99 - 0.89*float64(n-low)/float64(high-low)
	}
}

// value is node n as the value v2 gives an interface{}, with mappings made
// map[string]any by sigs.k8s.io/yaml's key rules.
func (c *converter) value(n *yamlv3.Node) (any, error) {
	c.nodes++
	if c.aliasDepth > 0 {
		c.aliased++
	}
	if c.aliased > 100 && c.nodes > 1000 && float64(c.aliased)/float64(c.nodes) > aliasRatio(c.nodes) {
		return nil, &ExpansionError{Bound: BoundAliases, Limit: int(math.Round(100 * aliasRatio(c.nodes)))}
	}
	if c.nodes > MaxNodes {
		return nil, &ExpansionError{Bound: BoundNodes, Limit: MaxNodes}
	}
	switch n.Kind {
	case 0:
		return nil, nil // an empty document
	case yamlv3.DocumentNode:
		if len(n.Content) != 1 {
			return nil, nil
		}
		return c.value(n.Content[0])
	case yamlv3.AliasNode:
		if c.active[n] {
			return nil, fmt.Errorf("yaml: anchor '%s' value contains itself", n.Value)
		}
		if n.Alias == nil {
			return nil, fmt.Errorf("yaml: unknown anchor '%s' referenced", n.Value)
		}
		c.active[n] = true
		c.aliasDepth++
		v, err := c.value(n.Alias)
		c.aliasDepth--
		delete(c.active, n)
		return v, err
	case yamlv3.ScalarNode:
		v, err := scalar(n)
		if err != nil {
			return nil, err
		}
		return v, c.grow(jsonLen(v))
	case yamlv3.SequenceNode:
		if err := c.grow(1 + len(n.Content)); err != nil { // brackets and commas
			return nil, err
		}
		out := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			v, err := c.value(e)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yamlv3.MappingNode:
		if err := c.grow(2); err != nil {
			return nil, err
		}
		out := map[string]any{}
		if err := c.mapping(n, out, map[string]any{}); err != nil {
			return nil, err
		}
		return out, nil
	}
	return nil, fmt.Errorf("yaml: unknown node kind %d", n.Kind)
}

// errKeyCollision is returned for a mapping with two keys that are different
// values but the same JSON name (9 and "9", 0x10 and 16.0): sigs.k8s.io/yaml keeps
// one of them at random.
var errKeyCollision = errors.New("yaml: two keys of a mapping have the same name in JSON")

// mapping sets the pairs of mapping n into out in order, a later key replacing an
// earlier one, and merge keys merged where they stand (v2's order). keys holds the
// YAML value of each key set in out.
func (c *converter) mapping(n *yamlv3.Node, out, keys map[string]any) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isMerge(k) {
			if err := c.merge(v, out, keys); err != nil {
				return err
			}
			continue
		}
		key, err := c.value(k)
		if err != nil {
			return err
		}
		switch key.(type) {
		case map[string]any, []any:
			return fmt.Errorf("yaml: invalid map key: %s", kindName(key))
		}
		name, err := keyString(key)
		if err != nil {
			return err
		}
		if prev, ok := keys[name]; ok && !sameKey(prev, key) {
			return fmt.Errorf("%w: %q", errKeyCollision, name)
		}
		keys[name] = key
		if err := c.grow(jsonStringLen(name) + 2); err != nil { // the name, ':' and ','
			return err
		}
		val, err := c.value(v)
		if err != nil {
			return err
		}
		out[name] = val
	}
	return nil
}

// errMergeMap is v2's error for a merge key whose value is not a mapping or a
// sequence of mappings.
var errMergeMap = errors.New("yaml: map merge requires map or sequence of maps as the value")

// merge merges v, the value of a merge key, into out: a mapping (or an alias of
// one), or a sequence of them, the last first so that the first wins.
func (c *converter) merge(v *yamlv3.Node, out, keys map[string]any) error {
	isMap := func(n *yamlv3.Node) bool {
		return n.Kind == yamlv3.MappingNode || (n.Kind == yamlv3.AliasNode && (n.Alias == nil || n.Alias.Kind == yamlv3.MappingNode))
	}
	switch v.Kind {
	case yamlv3.MappingNode, yamlv3.AliasNode:
		if !isMap(v) {
			return errMergeMap
		}
		return c.mergeOne(v, out, keys)
	case yamlv3.SequenceNode:
		for i := len(v.Content) - 1; i >= 0; i-- {
			if !isMap(v.Content[i]) {
				return errMergeMap
			}
			if err := c.mergeOne(v.Content[i], out, keys); err != nil {
				return err
			}
		}
		return nil
	}
	return errMergeMap
}

// mergeOne merges one mapping (or alias of one) into out, counted as v2 counts it.
func (c *converter) mergeOne(n *yamlv3.Node, out, keys map[string]any) error {
	c.nodes++
	if c.aliasDepth > 0 {
		c.aliased++
	}
	if n.Kind == yamlv3.MappingNode {
		return c.mapping(n, out, keys)
	}
	if c.active[n] {
		return fmt.Errorf("yaml: anchor '%s' value contains itself", n.Value)
	}
	if n.Alias == nil {
		return fmt.Errorf("yaml: unknown anchor '%s' referenced", n.Value)
	}
	c.active[n] = true
	c.aliasDepth++
	err := c.mergeOne(n.Alias, out, keys)
	c.aliasDepth--
	delete(c.active, n)
	return err
}

// jsonLen is the length of scalar v in JSON, at least as long as
// encoding/json writes it.
func jsonLen(v any) int {
	switch v := v.(type) {
	case string:
		return jsonStringLen(v)
	case int:
		return len(strconv.Itoa(v))
	case uint64:
		return len(strconv.FormatUint(v, 10))
	case bool:
		return 5
	case nil:
		return 4
	}
	return 24 // a float64, in the longest form encoding/json writes
}

// jsonStringLen is the length of s as a JSON string as encoding/json writes it:
// quoted; '"', '\\', '\n', '\r', '\t', '\b' and '\f' escaped with a backslash;
// the other control characters, '<', '>', '&', U+2028, U+2029 and each byte that
// is not UTF-8 as \uXXXX.
func jsonStringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == '\u2028', r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// KeyName is the name ToJSON gives mapping key n in JSON ("16" for 16, 0x10
// and '16'; "true" for yes), for callers that walk the node tree; false for a
// key ToJSON refuses or that has no name of its own (a merge key, an alias, a
// sequence or a mapping).
func KeyName(n *yamlv3.Node) (string, bool) {
	if n.Kind != yamlv3.ScalarNode || isMerge(n) {
		return "", false
	}
	v, err := scalar(n)
	if err != nil {
		return "", false
	}
	name, err := keyString(v)
	return name, err == nil
}

// isMerge reports whether key n is a merge key: a plain <<, or << tagged !!merge.
func isMerge(n *yamlv3.Node) bool {
	return n.Kind == yamlv3.ScalarNode && n.Value == "<<" &&
		(explicitTag(n) == "" && n.Style&quotedStyles == 0 || explicitTag(n) == "!!merge")
}

// quotedStyles are the styles of a scalar that is not plain.
const quotedStyles = yamlv3.DoubleQuotedStyle | yamlv3.SingleQuotedStyle | yamlv3.LiteralStyle | yamlv3.FoldedStyle

// explicitTag is the tag written on n ("" when none): v3 fills Tag with the tag it
// resolves, and marks a written one with TaggedStyle.
func explicitTag(n *yamlv3.Node) string {
	if n.Style&yamlv3.TaggedStyle == 0 {
		return ""
	}
	return n.Tag
}

// sameKey reports whether two keys are the same YAML value (NaN is not itself, as
// in a Go map).
func sameKey(a, b any) bool { return a == b }

// kindName names the kind of a key value for an error.
func kindName(v any) string {
	if _, ok := v.(map[string]any); ok {
		return "a mapping"
	}
	return "a sequence"
}

// keyString names a map key as sigs.k8s.io/yaml does: strings as they are, integers
// in decimal, floats in their shortest 32-bit form, booleans as true and false;
// other keys (null, integers past int64) are an error.
func keyString(k any) (string, error) {
	switch k := k.(type) {
	case string:
		return k, nil
	case int:
		return strconv.Itoa(k), nil
	case float64:
		switch s := strconv.FormatFloat(k, 'g', -1, 32); s {
		case "+Inf":
			return ".inf", nil
		case "-Inf":
			return "-.inf", nil
		case "NaN":
			return ".nan", nil
		default:
			return s, nil
		}
	case bool:
		return strconv.FormatBool(k), nil
	case nil:
		return "", errors.New("unsupported map key of type: <nil>")
	default:
		return "", fmt.Errorf("unsupported map key of type: %T, key: %v", k, k)
	}
}

// The tags of YAML 1.1's types, as v3 writes them in short form.
const (
	tagStr       = "!!str"
	tagBool      = "!!bool"
	tagInt       = "!!int"
	tagFloat     = "!!float"
	tagNull      = "!!null"
	tagTimestamp = "!!timestamp"
	tagBinary    = "!!binary"
)

// scalar is the value v2 gives scalar n in an interface{}: a quoted or block
// scalar without a tag is a string; a plain one, or one tagged with a YAML type, is
// resolved by YAML 1.1's rules; any other tag leaves the text (!!binary decoded).
func scalar(n *yamlv3.Node) (any, error) {
	tag := explicitTag(n)
	if tag == "!" || (tag == "" && n.Style&quotedStyles != 0) {
		return n.Value, nil
	}
	switch tag {
	case "", tagStr, tagBool, tagInt, tagFloat, tagNull, tagTimestamp:
	case tagBinary:
		b, err := base64.StdEncoding.DecodeString(n.Value)
		if err != nil {
			return nil, errors.New("yaml: !!binary value contains invalid base64 data")
		}
		return string(b), nil
	default:
		return n.Value, nil
	}
	rtag, v := resolve(tag, n.Value)
	switch {
	case tag == "" || tag == rtag || tag == tagStr:
		return v, nil
	case tag == tagFloat && rtag == tagInt:
		switch i := v.(type) {
		case int:
			return float64(i), nil
		case int64:
			return float64(i), nil
		}
	}
	return nil, fmt.Errorf("yaml: cannot decode %s `%s` as a %s", rtag, n.Value, tag)
}

// resolve is YAML 1.1's resolution of plain scalar s (v2's): its tag and value. A
// timestamp stays its text, as v2 leaves it in an interface{}.
func resolve(tag, s string) (string, any) {
	if tag == tagStr {
		return tagStr, s
	}
	if s == "" {
		return tagNull, nil
	}
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
		return tagBool, true
	case "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
		return tagBool, false
	case "~", "null", "Null", "NULL":
		return tagNull, nil
	case ".nan", ".NaN", ".NAN":
		return tagFloat, math.NaN()
	case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF":
		return tagFloat, math.Inf(1)
	case "-.inf", "-.Inf", "-.INF":
		return tagFloat, math.Inf(-1)
	case "<<":
		return "!!merge", "<<"
	}
	switch c := s[0]; {
	case c == '.':
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return tagFloat, f
		}
	case c == '+' || c == '-' || (c >= '0' && c <= '9'):
		if (tag == "" || tag == tagTimestamp) && isTimestamp(s) {
			return tagTimestamp, s
		}
		plain := strings.ReplaceAll(s, "_", "")
		if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return tagInt, int(i)
		}
		if u, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return tagInt, u
		}
		if isYAMLFloat(plain) {
			if f, err := strconv.ParseFloat(plain, 64); err == nil {
				return tagFloat, f
			}
		}
		if rest, ok := strings.CutPrefix(plain, "0b"); ok {
			if i, err := strconv.ParseInt(rest, 2, 64); err == nil {
				return tagInt, int(i)
			}
			if u, err := strconv.ParseUint(rest, 2, 64); err == nil {
				return tagInt, u
			}
		} else if rest, ok := strings.CutPrefix(plain, "-0b"); ok {
			if i, err := strconv.ParseInt("-"+rest, 2, 64); err == nil {
				return tagInt, int(i)
			}
		}
	}
	return tagStr, s
}

// isYAMLFloat reports whether s is [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?.
func isYAMLFloat(s string) bool {
	digits := func() int {
		n := 0
		for n < len(s) && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		s = s[n:]
		return n
	}
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s != "" && s[0] == '.' {
		s = s[1:]
		if digits() == 0 {
			return false
		}
	} else {
		if digits() == 0 {
			return false
		}
		if s != "" && s[0] == '.' {
			s = s[1:]
			digits()
		}
	}
	if s != "" && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s != "" && (s[0] == '+' || s[0] == '-') {
			s = s[1:]
		}
		if digits() == 0 {
			return false
		}
	}
	return s == ""
}

// timestampFormats are the layouts of YAML 1.1 timestamps that v2 recognises.
var timestampFormats = []string{
	"2006-1-2T15:4:5.999999999Z07:00",
	"2006-1-2t15:4:5.999999999Z07:00",
	"2006-1-2 15:4:5.999999999",
	"2006-1-2",
}

// isTimestamp reports whether s is a timestamp by v2's rule: four digits, a '-',
// and one of timestampFormats.
func isTimestamp(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i != 4 || i == len(s) || s[i] != '-' {
		return false
	}
	for _, f := range timestampFormats {
		if _, err := time.Parse(f, s); err == nil {
			return true
		}
	}
	return false
}
