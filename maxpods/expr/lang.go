package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// typ is the type of a (sub)expression: the four CEL types of the cut-down language.
type typ uint8

const (
	tInt typ = iota + 1
	tUint
	tDouble
	tBool
)

func (t typ) String() string {
	switch t {
	case tInt:
		return "int"
	case tUint:
		return "uint"
	case tDouble:
		return "double"
	case tBool:
		return "bool"
	}
	return "?"
}

// value is a CEL value of one of the four types.
type value struct {
	t typ
	i int64
	u uint64
	d float64
	b bool
}

// node is a checked expression: a literal (op ""), a variable (op "var", v its
// index in variables) or an operator or function applied to kids. cost is its
// cost in cel-go's estimate (literals 0, variables and calls 1, && and || only
// their operands, ?: its condition and the dearer branch).
type node struct {
	op   string
	lit  value
	v    int
	kids []*node
	t    typ
	cost int
}

// token kinds.
const (
	tkEOF = iota
	tkNum
	tkIdent
	tkPunct
)

type token struct {
	kind int
	text string
	off  int // byte offset in the expression
}

// parser is a recursive-descent parser of the cut-down language that checks types
// and sums the cost as it builds the tree. Its grammar is CEL's (cel-spec's
// langdef.md and cel-go's CEL.g4), with what a max pods expression cannot use
// refused by name where CEL's grammar has it.
type parser struct {
	src   string
	toks  []token
	pos   int
	depth int
}

// langError is an error at a column of the expression (1-based, in characters).
type langError struct {
	col int
	msg string
}

func (e *langError) Error() string { return fmt.Sprintf("column %d: %s", e.col, e.msg) }

func (p *parser) errAt(off int, format string, args ...any) *langError {
	return &langError{col: utf8.RuneCountInString(p.src[:off]) + 1, msg: fmt.Sprintf(format, args...)}
}

// parse parses and checks src, a string of at most MaxLength bytes.
func parse(src string) (*node, error) {
	p := &parser{src: src}
	if err := p.lex(); err != nil {
		return nil, err
	}
	n, err := p.expr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tkEOF {
		return nil, p.unexpected(t)
	}
	return n, nil
}

// puncts are CEL's operators and punctuation, longest first.
var puncts = []string{"==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "+", "-", "*", "/", "%", "?", ":", "(", ")", "[", "]", "{", "}", ",", "."}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' }
func isHex(c byte) bool    { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// lex splits p.src into tokens as CEL's lexer does (longest match; whitespace is
// tab, space, CR, LF and form feed; // comments to the end of the line).
func (p *parser) lex() error {
	s := p.src
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f':
			i++
		case strings.HasPrefix(s[i:], "//"):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case isDigit(c) || c == '.' && i+1 < len(s) && isDigit(s[i+1]):
			j := lexNumber(s, i)
			p.toks = append(p.toks, token{tkNum, s[i:j], i})
			i = j
		case isLetter(c):
			j := i + 1
			for j < len(s) && (isLetter(s[j]) || isDigit(s[j])) {
				j++
			}
			p.toks = append(p.toks, token{tkIdent, s[i:j], i})
			i = j
		case c == '\'' || c == '"':
			return p.errAt(i, "strings are not allowed")
		case c == '`':
			return p.errAt(i, "quoted names are not allowed")
		default:
			op := punct(s[i:])
			if op == "" {
				r, _ := utf8.DecodeRuneInString(s[i:])
				return p.errAt(i, "unexpected character %q", r)
			}
			p.toks = append(p.toks, token{tkPunct, op, i})
			i += len(op)
		}
	}
	p.toks = append(p.toks, token{tkEOF, "", len(s)})
	return nil
}

// punct returns the operator or punctuation s starts with, or "".
func punct(s string) string {
	for _, op := range puncts {
		if strings.HasPrefix(s, op) {
			return op
		}
	}
	return ""
}

// lexNumber returns the end of the number that starts at s[i]: CEL's NUM_FLOAT
// (digits, a fraction, an exponent), NUM_INT (decimal or 0x hexadecimal) or
// NUM_UINT (an integer with u or U).
func lexNumber(s string, i int) int {
	digits := func(i int) int {
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		return i
	}
	var j int
	integer := true
	if s[i] == '0' && i+2 < len(s) && s[i+1] == 'x' && isHex(s[i+2]) {
		j = i + 2
		for j < len(s) && isHex(s[j]) {
			j++
		}
	} else {
		j = digits(i)
		if j < len(s)-1 && s[j] == '.' && isDigit(s[j+1]) {
			j, integer = digits(j+1), false
		}
		if k := j; k < len(s) && (s[k] == 'e' || s[k] == 'E') { // an exponent
			k++
			if k < len(s) && (s[k] == '+' || s[k] == '-') {
				k++
			}
			if e := digits(k); e > k {
				j, integer = e, false
			}
		}
	}
	if integer && j < len(s) && (s[j] == 'u' || s[j] == 'U') {
		j++
	}
	return j
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tkEOF {
		p.pos++
	}
	return t
}

func (p *parser) is(text string) bool {
	t := p.peek()
	return t.kind == tkPunct && t.text == text
}

// unexpected is the error for a token where the grammar has no place for it.
func (p *parser) unexpected(t token) error {
	switch {
	case t.kind == tkEOF:
		return p.errAt(t.off, "the expression ends too early")
	case t.kind == tkPunct && t.text == "[":
		return p.errAt(t.off, "lists and indexing are not allowed")
	case t.kind == tkPunct && t.text == "{":
		return p.errAt(t.off, "maps and messages are not allowed")
	case t.kind == tkPunct && t.text == ".":
		return p.errAt(t.off, "fields and methods are not allowed")
	case t.kind == tkIdent && t.text == "in":
		return p.errAt(t.off, "in is not allowed")
	}
	return p.errAt(t.off, "unexpected %q", t.text)
}

func (p *parser) expect(text string) error {
	if !p.is(text) {
		return p.unexpected(p.peek())
	}
	p.next()
	return nil
}

// expr is CEL's expr rule: conditionalOr ['?' conditionalOr ':' expr]. Each
// level of it (the whole expression, parentheses, arguments, a conditional's else
// branch) counts against maxDepth.
func (p *parser) expr() (*node, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return nil, p.errAt(p.peek().off, "nested more than %d levels deep", maxDepth)
	}
	c, err := p.binary(0)
	if err != nil || !p.is("?") {
		return c, err
	}
	q := p.next()
	a, err := p.binary(0)
	if err != nil {
		return nil, err
	}
	if err := p.expect(":"); err != nil {
		return nil, err
	}
	b, err := p.expr()
	if err != nil {
		return nil, err
	}
	if c.t != tBool || a.t != b.t {
		return nil, p.errAt(q.off, "?: does not take (%s, %s, %s)", c.t, a.t, b.t)
	}
	return &node{op: "?:", kids: []*node{c, a, b}, t: a.t, cost: c.cost + max(a.cost, b.cost)}, nil
}

// levels are CEL's binary operators from the loosest: ||, &&, the relations, + -,
// * / %; all associate to the left.
var levels = [][]string{{"||"}, {"&&"}, {"==", "!=", "<", "<=", ">", ">="}, {"+", "-"}, {"*", "/", "%"}}

// binary parses the operators of levels[l:] and the unary expressions between them.
func (p *parser) binary(l int) (*node, error) {
	if l == len(levels) {
		return p.unary()
	}
	x, err := p.binary(l + 1)
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if l == 2 && t.kind == tkIdent && t.text == "in" {
			return nil, p.errAt(t.off, "in is not allowed")
		}
		if t.kind != tkPunct || !contains(levels[l], t.text) {
			return x, nil
		}
		p.next()
		p.depth++ // the operand nests in CEL's parser: a chain counts against maxDepth
		if p.depth > maxDepth {
			return nil, p.errAt(t.off, "nested more than %d levels deep", maxDepth)
		}
		y, err := p.binary(l + 1)
		p.depth--
		if err != nil {
			return nil, err
		}
		if x, err = p.apply(t, x, y); err != nil {
			return nil, err
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// apply checks the types of a binary operator's operands.
func (p *parser) apply(op token, x, y *node) (*node, error) {
	n := &node{op: op.text, kids: []*node{x, y}, cost: 1 + x.cost + y.cost}
	ok := x.t == y.t
	switch op.text {
	case "&&", "||":
		ok = ok && x.t == tBool
		n.t, n.cost = tBool, x.cost+y.cost
	case "==", "!=":
		n.t = tBool
	case "<", "<=", ">", ">=":
		ok = ok && x.t != tBool
		n.t = tBool
	case "%":
		ok = ok && (x.t == tInt || x.t == tUint)
		n.t = x.t
	default: // + - * /
		ok = ok && x.t != tBool
		n.t = x.t
	}
	if !ok {
		return nil, p.errAt(op.off, "%s does not take (%s, %s)", op.text, x.t, y.t)
	}
	return n, nil
}

// unary is CEL's unary rule: a member, or a run of ! or of - before one. As in
// cel-go, a run of even length is no operator at all, and of odd length one; a
// single - before a number is the number's sign.
func (p *parser) unary() (*node, error) {
	t := p.peek()
	if t.kind != tkPunct || t.text != "!" && t.text != "-" {
		return p.member()
	}
	k := 0
	for p.is(t.text) {
		p.next()
		k++
	}
	if t.text == "-" && k == 1 {
		if nt := p.peek(); nt.kind == tkNum && !strings.HasSuffix(nt.text, "u") && !strings.HasSuffix(nt.text, "U") {
			p.pos-- // the sign is the literal's
			return p.member()
		}
	}
	x, err := p.member()
	if err != nil || k%2 == 0 {
		return x, err
	}
	if t.text == "!" && x.t != tBool || t.text == "-" && x.t != tInt && x.t != tDouble {
		return nil, p.errAt(t.off, "%s does not take (%s)", t.text, x.t)
	}
	op := "neg"
	if t.text == "!" {
		op = "!"
	}
	return &node{op: op, kids: []*node{x}, t: x.t, cost: 1 + x.cost}, nil
}

// member is CEL's member rule, of which only the primary is allowed: no fields,
// methods or indexing.
func (p *parser) member() (*node, error) {
	x, err := p.primary()
	if err != nil {
		return nil, err
	}
	if p.is(".") || p.is("[") {
		return nil, p.unexpected(p.peek())
	}
	return x, nil
}

// primary is a literal, a variable, int(x) or double(x), or an expression in
// parentheses.
func (p *parser) primary() (*node, error) {
	t := p.next()
	switch {
	case t.kind == tkPunct && t.text == "(":
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		return x, p.expect(")")
	case t.kind == tkPunct && t.text == "-": // a signed number (unary checked it is one)
		return p.number(p.next(), true)
	case t.kind == tkNum:
		return p.number(t, false)
	case t.kind == tkPunct && t.text == ".": // CEL's leading dot: the name in the root scope
		if nt := p.peek(); nt.kind == tkIdent {
			return p.name(p.next())
		}
	case t.kind == tkIdent:
		return p.name(t)
	}
	return nil, p.unexpected(t)
}

// number parses a numeric literal as cel-go does (decimal or 0x hexadecimal
// integers, u or U for unsigned, doubles by strconv.ParseFloat).
func (p *parser) number(t token, negative bool) (*node, error) {
	text := t.text
	sign := ""
	if negative {
		sign = "-"
	}
	if strings.HasSuffix(text, "u") || strings.HasSuffix(text, "U") {
		digits, base := text[:len(text)-1], 10
		if h, ok := strings.CutPrefix(digits, "0x"); ok {
			digits, base = h, 16
		}
		u, err := strconv.ParseUint(digits, base, 64)
		if err != nil {
			return nil, p.errAt(t.off, "the number %s is out of range", text)
		}
		return &node{lit: value{t: tUint, u: u}, t: tUint}, nil
	}
	if strings.ContainsAny(text, ".eE") && !strings.HasPrefix(text, "0x") {
		d, err := strconv.ParseFloat(sign+text, 64)
		if err != nil {
			return nil, p.errAt(t.off, "the number %s%s is out of range", sign, text)
		}
		return &node{lit: value{t: tDouble, d: d}, t: tDouble}, nil
	}
	digits, base := text, 10
	if h, ok := strings.CutPrefix(digits, "0x"); ok {
		digits, base = h, 16
	}
	i, err := strconv.ParseInt(sign+digits, base, 64)
	if err != nil {
		return nil, p.errAt(t.off, "the number %s%s is out of range", sign, text)
	}
	return &node{lit: value{t: tInt, i: i}, t: tInt}, nil
}

// name is a variable, true, false, or a call of int or double.
func (p *parser) name(t token) (*node, error) {
	if p.is("(") {
		open := p.next()
		if t.text != "int" && t.text != "double" {
			return nil, p.errAt(open.off, "unknown name %q", t.text)
		}
		if p.is(")") {
			return nil, p.errAt(open.off, "%s() takes one argument", t.text)
		}
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		if p.is(",") {
			return nil, p.errAt(open.off, "%s() takes one argument", t.text)
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
		if x.t == tBool {
			return nil, p.errAt(open.off, "%s() does not take (%s)", t.text, x.t)
		}
		n := &node{op: t.text, kids: []*node{x}, t: tInt, cost: 1 + x.cost}
		if t.text == "double" {
			n.t = tDouble
		}
		return n, nil
	}
	switch t.text {
	case "true", "false":
		return &node{lit: value{t: tBool, b: t.text == "true"}, t: tBool}, nil
	case "null":
		return nil, p.errAt(t.off, "null is not allowed")
	case "in":
		return nil, p.errAt(t.off, "in is not allowed")
	}
	for i, x := range variables {
		if x.name == t.text {
			return &node{op: "var", v: i, t: tInt, cost: 1}, nil
		}
	}
	if p.is("{") {
		return nil, p.unexpected(p.peek())
	}
	return nil, p.errAt(t.off, "unknown name %q", t.text)
}

// evalError is a failure of an evaluation, worded as cel-go words it.
type evalError string

func (e evalError) Error() string { return string(e) }

const (
	errIntOverflow  evalError = "integer overflow"
	errUintOverflow evalError = "unsigned integer overflow"
	errDivZero      evalError = "division by zero"
	errModZero      evalError = "modulus by zero"
	errNaNOrder     evalError = "NaN values cannot be ordered"
)

// eval evaluates a checked expression over the variables in vars, with CEL's
// semantics: checked integer arithmetic, IEEE doubles, && and || that ignore an
// error on the side that does not decide (false && error is false), and of two
// errors the left one.
func eval(n *node, vars *[3]int64) (value, error) {
	switch n.op {
	case "":
		return n.lit, nil
	case "var":
		return value{t: tInt, i: vars[n.v]}, nil
	case "?:":
		c, err := eval(n.kids[0], vars)
		if err != nil {
			return value{}, err
		}
		if c.b {
			return eval(n.kids[1], vars)
		}
		return eval(n.kids[2], vars)
	case "&&", "||":
		decide := n.op == "||" // the value that decides
		x, xerr := eval(n.kids[0], vars)
		if xerr == nil && x.b == decide {
			return x, nil
		}
		y, yerr := eval(n.kids[1], vars)
		if yerr == nil && y.b == decide {
			return y, nil
		}
		if xerr != nil {
			return value{}, xerr
		}
		return y, yerr
	}
	x, err := eval(n.kids[0], vars)
	if err != nil {
		return value{}, err
	}
	if len(n.kids) == 1 {
		return unaryOp(n.op, x)
	}
	y, err := eval(n.kids[1], vars)
	if err != nil {
		return value{}, err
	}
	return binaryOp(n.op, x, y)
}

func unaryOp(op string, x value) (value, error) {
	switch op {
	case "!":
		return value{t: tBool, b: !x.b}, nil
	case "neg":
		if x.t == tDouble {
			return value{t: tDouble, d: -x.d}, nil
		}
		if x.i == math.MinInt64 {
			return value{}, errIntOverflow
		}
		return value{t: tInt, i: -x.i}, nil
	case "int":
		switch x.t {
		case tUint:
			if x.u > math.MaxInt64 {
				return value{}, errIntOverflow
			}
			return value{t: tInt, i: int64(x.u)}, nil
		case tDouble:
			i, err := doubleToInt(x.d)
			return value{t: tInt, i: i}, err
		}
		return x, nil
	default: // double
		switch x.t {
		case tInt:
			return value{t: tDouble, d: float64(x.i)}, nil
		case tUint:
			return value{t: tDouble, d: float64(x.u)}, nil
		}
		return x, nil
	}
}

// doubleToInt truncates d toward zero; out of int64's range (NaN and the
// infinities included) it is an overflow, by cel-go's bounds.
func doubleToInt(d float64) (int64, error) {
	if math.IsInf(d, 0) || math.IsNaN(d) || d <= float64(math.MinInt64) || d >= float64(math.MaxInt64) {
		return 0, errIntOverflow
	}
	return int64(d), nil
}

func binaryOp(op string, x, y value) (value, error) {
	switch op {
	case "==", "!=":
		var eq bool
		switch x.t {
		case tInt:
			eq = x.i == y.i
		case tUint:
			eq = x.u == y.u
		case tDouble:
			eq = x.d == y.d
		default:
			eq = x.b == y.b
		}
		return value{t: tBool, b: eq == (op == "==")}, nil
	case "<", "<=", ">", ">=":
		var c int // -1, 0, 1
		switch x.t {
		case tInt:
			c = cmp3(x.i < y.i, x.i > y.i)
		case tUint:
			c = cmp3(x.u < y.u, x.u > y.u)
		default:
			if math.IsNaN(x.d) || math.IsNaN(y.d) {
				return value{}, errNaNOrder
			}
			c = cmp3(x.d < y.d, x.d > y.d)
		}
		var b bool
		switch op {
		case "<":
			b = c < 0
		case "<=":
			b = c <= 0
		case ">":
			b = c > 0
		default:
			b = c >= 0
		}
		return value{t: tBool, b: b}, nil
	}
	switch x.t {
	case tInt:
		i, err := intOp(op, x.i, y.i)
		return value{t: tInt, i: i}, err
	case tUint:
		u, err := uintOp(op, x.u, y.u)
		return value{t: tUint, u: u}, err
	}
	var d float64
	switch op {
	case "+":
		d = x.d + y.d
	case "-":
		d = x.d - y.d
	case "*":
		d = x.d * y.d
	default:
		d = x.d / y.d
	}
	return value{t: tDouble, d: d}, nil
}

func cmp3(less, more bool) int {
	switch {
	case less:
		return -1
	case more:
		return 1
	}
	return 0
}

// intOp is checked int64 arithmetic: overflow and division by zero are errors.
func intOp(op string, x, y int64) (int64, error) {
	if op == "/" || op == "%" {
		return intDiv(op, x, y)
	}
	switch op {
	case "+":
		if y > 0 && x > math.MaxInt64-y || y < 0 && x < math.MinInt64-y {
			return 0, errIntOverflow
		}
		return x + y, nil
	case "-":
		if y < 0 && x > math.MaxInt64+y || y > 0 && x < math.MinInt64+y {
			return 0, errIntOverflow
		}
		return x - y, nil
	case "*":
		if x == -1 && y == math.MinInt64 || y == -1 && x == math.MinInt64 ||
			x > 0 && y > 0 && x > math.MaxInt64/y || x > 0 && y < 0 && y < math.MinInt64/x ||
			x < 0 && y > 0 && x < math.MinInt64/y || x < 0 && y < 0 && y < math.MaxInt64/x {
			return 0, errIntOverflow
		}
		return x * y, nil
	}
	return 0, fmt.Errorf("unknown operator %s", op) // parse made no such node
}

// intDiv is checked int64 division and remainder.
func intDiv(op string, x, y int64) (int64, error) {
	if y == 0 {
		if op == "/" {
			return 0, errDivZero
		}
		return 0, errModZero
	}
	if x == math.MinInt64 && y == -1 {
		return 0, errIntOverflow
	}
	if op == "/" {
		return x / y, nil
	}
	return x % y, nil
}

// uintOp is checked uint64 arithmetic.
func uintOp(op string, x, y uint64) (uint64, error) {
	switch op {
	case "+":
		if x > math.MaxUint64-y {
			return 0, errUintOverflow
		}
		return x + y, nil
	case "-":
		if y > x {
			return 0, errUintOverflow
		}
		return x - y, nil
	case "*":
		if y != 0 && x > math.MaxUint64/y {
			return 0, errUintOverflow
		}
		return x * y, nil
	}
	if y == 0 {
		if op == "/" {
			return 0, errDivZero
		}
		return 0, errModZero
	}
	if op == "/" {
		return x / y, nil
	}
	return x % y, nil
}
