package expr

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/env"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/overloads"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// The oracle: cel-go (nodeadm's evaluator) in the cut-down environment this
// package built before it had its own evaluator (CEL's standard library with only
// the numeric overloads of the operators, logic, ?:, int() and double(); no
// macros; cel-go's parser limits), with the same checks of the result and cost.
// It is a test dependency only: the binary does not link cel-go (docs/performance.md).

// celEnvironment is the oracle's environment, built once.
var celEnvironment = sync.OnceValues(func() (*cel.Env, error) {
	opts := []cel.EnvOption{
		cel.StdLib(cel.StdLibSubset(celSubset())),
		cel.ParserExpressionSizeLimit(MaxLength),
		cel.ParserRecursionLimit(maxDepth),
	}
	for _, x := range variables {
		opts = append(opts, cel.Variable(x.name, cel.IntType))
	}
	return cel.NewCustomEnv(opts...)
})

func celSubset() *env.LibrarySubset {
	fn := func(name string, ids ...string) *env.Function {
		o := make([]*env.Overload, len(ids))
		for i, id := range ids {
			o[i] = &env.Overload{ID: id}
		}
		return env.NewFunction(name, o...)
	}
	numeric := func(op string) []string { return []string{op + "_int64", op + "_uint64", op + "_double"} }
	return env.NewLibrarySubset().SetDisableMacros(true).AddIncludedFunctions(
		fn(operators.Add, numeric("add")...),
		fn(operators.Subtract, numeric("subtract")...),
		fn(operators.Multiply, numeric("multiply")...),
		fn(operators.Divide, numeric("divide")...),
		fn(operators.Modulo, overloads.ModuloInt64, overloads.ModuloUint64),
		fn(operators.Negate, overloads.NegateInt64, overloads.NegateDouble),
		fn(operators.Less, numeric("less")...),
		fn(operators.LessEquals, numeric("less_equals")...),
		fn(operators.Greater, numeric("greater")...),
		fn(operators.GreaterEquals, numeric("greater_equals")...),
		fn(operators.Equals),
		fn(operators.NotEquals),
		fn(operators.LogicalAnd),
		fn(operators.LogicalOr),
		fn(operators.LogicalNot),
		fn(operators.Conditional),
		fn(overloads.TypeConvertInt, overloads.IntToInt, overloads.UintToInt, overloads.DoubleToInt),
		fn(overloads.TypeConvertDouble, overloads.DoubleToDouble, overloads.IntToDouble, overloads.UintToDouble),
	)
}

type noSizes struct{}

func (noSizes) EstimateSize(checker.AstNode) *checker.SizeEstimate { return nil }

func (noSizes) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// celOutcome is what the oracle made of an expression: refused when it does not
// compile (refusal is cel-go's message), else the value or the evaluation's error
// worded as Evaluate words it, and the estimated cost.
type celOutcome struct {
	refusal string
	cost    uint64
	pods    int32
	err     string
}

func celEvaluate(t testing.TB, expression string, vars Vars) celOutcome {
	t.Helper()
	e, err := celEnvironment()
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(expression) == "" || len(expression) > MaxLength {
		return celOutcome{refusal: "empty or too long"}
	}
	ast, iss := e.Compile(expression)
	if iss.Err() != nil {
		return celOutcome{refusal: oneLine(iss.Err().Error())}
	}
	switch ot := ast.OutputType(); {
	case ot.IsExactType(types.IntType), ot.IsExactType(types.UintType), ot.IsExactType(types.DoubleType):
	default:
		return celOutcome{refusal: "gives a " + ot.String()}
	}
	est, err := e.EstimateCost(ast, noSizes{})
	if err != nil {
		t.Fatalf("%q: estimating the cost: %v", expression, err)
	}
	if est.Max > CostLimit {
		return celOutcome{refusal: "too costly", cost: est.Max}
	}
	prg, err := e.Program(ast, cel.CostLimit(CostLimit))
	if err != nil {
		t.Fatalf("%q: %v", expression, err)
	}
	in := map[string]any{}
	for _, x := range variables {
		in[x.name] = int64(x.get(vars))
	}
	out := celOutcome{cost: est.Max}
	v, _, err := prg.Eval(in)
	if err != nil {
		out.err = fail(expression, "with %s: %s; want a whole number of pods from 1 to %d", vars, oneLine(err.Error()), MaxResult).Error()
		return out
	}
	n, err := celResult(v)
	if err != nil {
		out.err = fail(expression, "with %s: %v; want a whole number of pods from 1 to %d", vars, err, MaxResult).Error()
		return out
	}
	out.pods = n
	return out
}

// celResult is the old result(), on cel-go's values.
func celResult(v ref.Val) (int32, error) {
	var n int64
	switch x := v.(type) {
	case types.Int:
		n = int64(x)
	case types.Uint:
		if uint64(x) > MaxResult {
			return 0, fmt.Errorf("the result %du is more than %d", uint64(x), MaxResult)
		}
		n = int64(x)
	case types.Double:
		i, ok := x.ConvertToType(types.IntType).(types.Int)
		if !ok {
			return 0, fmt.Errorf("the result %v is not a whole number in range", float64(x))
		}
		n = int64(i)
	default:
		return 0, fmt.Errorf("the result is a %s, not a number", v.Type().TypeName())
	}
	if n < 1 || n > MaxResult {
		return 0, fmt.Errorf("the result is %d", n)
	}
	return int32(n), nil
}

// refusedByName are the refusals of what cel-go's cut-down environment took but
// a max pods expression has no use for (the package doc lists them).
var refusedByName = []string{
	"strings are not allowed", "quoted names are not allowed", "lists and indexing are not allowed",
	"maps and messages are not allowed", "null is not allowed",
	`unknown name "int"`, `unknown name "uint"`, `unknown name "double"`, `unknown name "bool"`,
	`unknown name "string"`, `unknown name "bytes"`, `unknown name "list"`, `unknown name "map"`,
	`unknown name "type"`, `unknown name "null_type"`,
}

// agreement tallies a differential run.
type agreement struct {
	accepted, refused, byName, deeper int
}

// compare checks this package against the oracle on one expression and facts.
func compare(t testing.TB, expression string, vars Vars, tally *agreement) {
	t.Helper()
	want := celEvaluate(t, expression, vars)
	checkErr := Check(expression)
	got, err := Evaluate(expression, vars)
	if checkErr != nil && (err == nil || err.Error() != checkErr.Error()) {
		t.Fatalf("%q: Check = %v but Evaluate = %d, %v", expression, checkErr, got, err)
	}
	depth := func(s string) bool {
		return strings.Contains(s, "recursion") || strings.Contains(s, "levels deep")
	}
	switch {
	case want.refusal != "" && checkErr != nil:
		tally.refused++
	case want.refusal != "":
		if !depth(want.refusal) {
			t.Fatalf("%q: cel-go refuses it (%s), Check accepts it (Evaluate(%v) = %d, %v)", expression, want.refusal, vars, got, err)
		}
		tally.deeper++
	case checkErr != nil:
		for _, s := range refusedByName {
			if strings.Contains(checkErr.Error(), s) {
				tally.byName++
				return
			}
		}
		if depth(checkErr.Error()) {
			tally.deeper++
			return
		}
		t.Fatalf("%q: cel-go accepts it (cost %d), Check refuses it: %v", expression, want.cost, checkErr)
	default:
		tally.accepted++
		n, cerr := compile(expression)
		if cerr != nil {
			t.Fatal(cerr)
		}
		if uint64(n.cost) != want.cost {
			t.Fatalf("%q: cost %d, cel-go estimates %d", expression, n.cost, want.cost)
		}
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != want.pods || gotErr != want.err {
			t.Fatalf("%q with %v:\n got %d, %q\nwant %d, %q (cel-go)", expression, vars, got, gotErr, want.pods, want.err)
		}
	}
}

// gen writes random expressions of the language, mostly well typed, with the
// spellings CEL allows (signs, runs of ! and -, hexadecimal and unsigned numbers,
// exponents, comments, a leading dot) and now and then something it is not.
type gen struct {
	r *rand.Rand
	b strings.Builder
}

var (
	intLits    = []string{"0", "1", "2", "3", "10", "16", "30", "110", "250", "65535", "65536", "9223372036854775807", "0x10", "0x7fffffffffffffff", "007", "-9223372036854775808", "-1", "- 2", "-0x10"}
	uintLits   = []string{"0u", "1u", "2U", "10u", "65535u", "18446744073709551615u", "0x10u", "0xFFFFFFFFFFFFFFFFu"}
	doubleLits = []string{"0.0", "0.5", "0.9", "1.0", "2.5", ".5", "1e3", "1E-3", "1e300", "1e-300", "-1.5", "2.0e+2", "9.2233720368547758e18", "-9.2233720368547758e18", "65535.9"}
	space      = []string{"", "", "", " ", "  ", "\t", "\n", " // a comment\n", "\f", "\r\n"}
	odd        = []string{
		"'a'", "\"b\"", "[1]", "{}", "null", "int", "x", "size(1)", "max_pods.x", "1 in [1]", "has(a.b)", "uint(1)", "dyn(1)", "int(1, 2)", "int()", "(", ")", "?", ":", "&", "|", "=", "`a`", "b'x'", "1.", "0x", "1e", "in", "true ? 1 : 2 ? 3 : 4", "\v", "é", "max_pods{}", "1u - 2", "--9223372036854775808", "---1", "!!1", "!-1", "-!true", ".max_pods", ". int(1)",
		"'a' == 'a' ? 1 : 2", "b'a' != b'b' ? 1 : 2", "[1] == [max_pods] ? 1 : 2", "{1: 2} == {} ? 1 : 2", "null == null ? 1 : 2",
		"int == int ? 1 : 2", "(true ? 'a' : 'b') == 'a' ? 1 : 2", "1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1",
		"1 + (1 + (1 + (1 + (1 + (1 + (1 + (1 + (1 + (1 + (1 + (1 + (1 + (1 + (1 + (1 + 1)))))))))))))))",
		"int(int(int(int(int(int(int(int(int(int(int(int(int(int(int(int(int(int(int(int(int(int(int(int(int(int(int(int(int(int(int(1)))))))))))))))))))))))))))))))",
		"1 ? 2 : 3", "true ? 1 : 2 ? 3 : 4", "true ? 1 : false ? 3 : 4", "-1u", "--1u", "-(1u)", "-0x8000000000000000", "1e400", "1e-400", "18446744073709551616u",
	}
)

func (g *gen) pick(list []string) string { return list[g.r.IntN(len(list))] }
func (g *gen) sp()                       { g.b.WriteString(g.pick(space)) }

// expr writes an expression of type t ("int", "uint", "double", "bool"), d levels
// at most, mistyped now and then.
func (g *gen) expr(t string, d int) {
	if g.r.IntN(40) == 0 {
		t = g.pick([]string{"int", "uint", "double", "bool"})
	}
	if g.r.IntN(300) == 0 {
		g.b.WriteString(g.pick(odd))
		return
	}
	g.sp()
	defer g.sp()
	if d <= 0 || g.r.IntN(4) == 0 {
		g.leaf(t)
		return
	}
	num := func() string { return g.pick([]string{"int", "int", "int", "uint", "double"}) }
	switch k := g.r.IntN(10); {
	case k == 0: // parentheses
		g.b.WriteString("(")
		g.expr(t, d-1)
		g.b.WriteString(")")
	case k == 1: // the conditional
		g.expr("bool", d-1)
		g.b.WriteString("?")
		g.b.WriteString("(")
		g.expr(t, d-1)
		g.b.WriteString(")")
		g.b.WriteString(":")
		g.expr(t, d-1)
	case k == 2 && t != "bool" && t != "uint": // a unary run
		g.b.WriteString(strings.Repeat("-", 1+g.r.IntN(3)))
		g.b.WriteString("(")
		g.expr(t, d-1)
		g.b.WriteString(")")
	case k == 2 && t == "bool":
		g.b.WriteString(strings.Repeat("!", 1+g.r.IntN(3)))
		g.b.WriteString("(")
		g.expr(t, d-1)
		g.b.WriteString(")")
	case k == 3 && (t == "int" || t == "double"): // a conversion
		g.b.WriteString(t)
		g.b.WriteString("(")
		g.expr(num(), d-1)
		g.b.WriteString(")")
	case t == "bool":
		switch g.r.IntN(3) {
		case 0:
			g.expr("bool", d-1)
			g.b.WriteString(g.pick([]string{"&&", "||", "==", "!="}))
			g.expr("bool", d-1)
		default:
			n := num()
			g.expr(n, d-1)
			g.b.WriteString(g.pick([]string{"==", "!=", "<", "<=", ">", ">="}))
			g.expr(n, d-1)
		}
	default:
		ops := []string{"+", "-", "*", "/", "%"}
		if t == "double" {
			ops = ops[:4]
		}
		g.expr(t, d-1)
		g.b.WriteString(g.pick(ops))
		g.expr(t, d-1)
	}
}

func (g *gen) leaf(t string) {
	switch t {
	case "int":
		if g.r.IntN(3) > 0 {
			g.b.WriteString(g.pick([]string{"default_enis", "ips_per_eni", "max_pods", ".max_pods"}))
		} else {
			g.b.WriteString(g.pick(intLits))
		}
	case "uint":
		g.b.WriteString(g.pick(uintLits))
	case "double":
		if g.r.IntN(2) == 0 {
			g.b.WriteString("double(" + g.pick([]string{"default_enis", "ips_per_eni", "max_pods"}) + ")")
		} else {
			g.b.WriteString(g.pick(doubleLits))
		}
	default:
		g.b.WriteString(g.pick([]string{"true", "false"}))
	}
}

// facts are the variables the differential tests evaluate over: real instance
// types and the edges of int64.
var facts = []Vars{
	m4xlarge, t3medium,
	{DefaultENIs: 1, IPsPerENI: 1, MaxPods: 2},
	{DefaultENIs: 15, IPsPerENI: 50, MaxPods: 737},
	{},
	{DefaultENIs: -1, IPsPerENI: -7, MaxPods: -3},
	{DefaultENIs: math.MaxInt64, IPsPerENI: math.MinInt64, MaxPods: math.MaxInt32},
}

func (g *gen) next() string {
	g.b.Reset()
	g.expr(g.pick([]string{"int", "int", "int", "uint", "double", "bool"}), 1+g.r.IntN(6))
	return g.b.String()
}

func TestAgreesWithCelGo(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 2000
	}
	g := &gen{r: rand.New(rand.NewPCG(29, 1))}
	var tally agreement
	for _, s := range odd {
		for _, v := range facts {
			compare(t, s, v, &tally)
		}
	}
	for range n {
		s := g.next()
		compare(t, s, facts[g.r.IntN(len(facts))], &tally)
	}
	t.Logf("%d expressions (and the odd ones over every fact): %d accepted by both with the same result, %d refused by both, %d refused by name, %d at the depth limits",
		n, tally.accepted, tally.refused, tally.byName, tally.deeper)
	if tally.accepted < n/3 || tally.refused < n/50 {
		t.Errorf("the generator's mix is off: %+v", tally)
	}
}

// FuzzAgreesWithCelGo mutates expressions byte by byte: whatever this package
// accepts cel-go accepts, with the same value, error and cost; whatever cel-go
// accepts this package accepts or refuses by name.
func FuzzAgreesWithCelGo(f *testing.F) {
	g := &gen{r: rand.New(rand.NewPCG(29, 2))}
	for range 200 {
		f.Add(g.next(), 4, 15, 58)
	}
	for _, s := range odd {
		f.Add(s, 4, 15, 58)
	}
	f.Fuzz(func(t *testing.T, expression string, enis, ips, pods int) {
		compare(t, expression, Vars{DefaultENIs: enis, IPsPerENI: ips, MaxPods: pods}, &agreement{})
	})
}

func TestNodeadmsLongestExpressionCostsWhatTheDocSays(t *testing.T) {
	const longest = "((default_enis * ((ips_per_eni * 16) - 1)) + 2) < 30 ? ((default_enis * ((ips_per_eni * 16) - 1)) + 2) : 30"
	n, err := compile(longest)
	if err != nil {
		t.Fatal(err)
	}
	if want := celEvaluate(t, longest, m4xlarge).cost; n.cost != 13 || want != 13 {
		t.Errorf("cost of nodeadm's longest tested expression = %d (cel-go %d), want 13 (the package doc says so)", n.cost, want)
	}
}

// oneLine folds a message onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
