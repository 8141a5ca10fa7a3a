// Package expr evaluates spec.kubelet.maxPodsExpression, nodeadm's CEL expression
// for the kubelet's maxPods, over the variables nodeadm documents for it
// (default_enis, ips_per_eni, max_pods; doc/examples.md of amazon-eks-ami's
// nodeadm at 81fec2e8).
//
// nodeadm compiles the expression against CEL's whole standard library (strings,
// regular expressions, timestamps, lists, maps and the comprehension macros) with
// no limit on its length or cost. Here the language is cut down to what a number
// of pods needs, so that user data cannot make a boot do much work:
//
//   - integer, unsigned and double literals, the three variables and parentheses;
//   - arithmetic on numbers of one type: + - * / % and unary - (max_pods + 0.5 is
//     a type error, in nodeadm too);
//   - comparisons: == != < <= > >=; logic: && || !; the conditional c ? a : b;
//   - the numeric conversions int() and double() (for percentages, such as
//     int(double(max_pods) * 0.9));
//   - no macros (has, all, exists, exists_one, map, filter), no other functions,
//     no string, list or map operations.
//
// The expression is at most MaxLength bytes and 32 levels deep, its cost (cel-go's
// measure: one unit per operation and variable) at most CostLimit, checked from
// the parsed expression before anything is evaluated and enforced again while it
// runs. Integer overflow and division by zero are errors, as CEL defines them.
// Without macros there are no comprehensions, the only loops in CEL, so an
// evaluation is one pass over at most MaxLength bytes of expression: there is
// nothing for a deadline to interrupt.
//
// The result must be a number from 1 to MaxResult. A double result is truncated
// toward zero, as nodeadm converts it (29.9 gives 29).
//
// Deliberate differences from nodeadm: the result bound (nodeadm takes up to
// 2147483647); errors instead of nodeadm's warning and fallback to the standard
// max pods (whether a failed expression fails the boot is the caller's policy);
// vcpus and physical_memory_mib, which nodeadm's code gained after 81fec2e8
// (amazon-eks-ami #2777), are unknown names here, and eksboot's table has no
// memory size to give.
//
// Cost: cel-go, with the protobuf runtime it needs, initialises its packages at
// every start of a binary that links it, expression or not: about 2 ms and 520 KB
// of allocation before main, and 5.7 MB of stripped binary (measured on
// eksboot version; see the commit that added cel-go). Building the environment
// (0.1 ms) and compiling an expression (0.1-0.3 ms) happen only when one is used.
//
// The package is pure: no disk, no network, no logging. Check is for validating
// user data before any instance fact is fetched; Evaluate needs the facts in
// Vars, which VarsFor makes from the facts package maxpods has for an instance
// type.
package expr

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/env"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/overloads"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"github.com/eksboot/eksboot/maxpods"
)

// Field is the NodeConfig path that every error of this package names.
const Field = "spec.kubelet.maxPodsExpression"

const (
	// MaxLength is the longest expression accepted, in bytes. nodeadm's documented
	// examples are under 100.
	MaxLength = 1024
	// CostLimit bounds an expression's cost in cel-go's units (one per operator
	// and variable reference; literals are free). nodeadm's longest tested
	// expression, a conditional that repeats its prefix-delegation formula,
	// costs 13.
	CostLimit = 256
	// MaxResult is the largest max pods an expression may give: the bound
	// maxpods.ParseRows puts on an eni-max-pods.txt row, far above any instance's
	// ENI formula (nodeadm accepts up to 2147483647).
	MaxResult = 65535

	// maxDepth bounds how deeply the expression may nest (cel-go's parser
	// recursion limit).
	maxDepth = 32
)

// Vars are the variables a max pods expression is evaluated over: the facts of
// the node's instance type. Each is an int in CEL. The caller fills them from the
// same facts that max pods is computed from (VarsFor does it for a
// maxpods.TypeInfo).
type Vars struct {
	// default_enis is the maximum number of network interfaces that can be
	// attached to the default network card of the instance type (EC2's
	// MaximumNetworkInterfaces of the card at DefaultNetworkCardIndex; eksboot's
	// maxpods.TypeInfo.ENIs, from the embedded table or
	// ec2:DescribeInstanceTypes). It is not lowered by spec.maxPods's MAX_ENI,
	// custom networking or security groups for pods: an expression that wants one
	// ENI fewer says so, e.g. ((default_enis - 1) * (ips_per_eni - 1)) + 2.
	DefaultENIs int
	// ips_per_eni is the maximum number of private IPv4 addresses per network
	// interface (EC2's Ipv4AddressesPerInterface; maxpods.TypeInfo.IPv4PerENI).
	IPsPerENI int
	// max_pods is the standard max pods of the instance type, as nodeadm
	// computes it with no expression: (default_enis * (ips_per_eni - 1)) + 2 (the
	// first address of each ENI is the ENI's own; +2 for the host-network aws-node
	// and kube-proxy pods). It is eni-max-pods.txt's number (maxpods.Classic),
	// without the 110/250 cap and without spec.maxPods's options.
	MaxPods int
}

// variables are the CEL names of Vars's fields, in the order errors list them.
var variables = []struct {
	name string
	get  func(Vars) int
}{
	{"default_enis", func(v Vars) int { return v.DefaultENIs }},
	{"ips_per_eni", func(v Vars) int { return v.IPsPerENI }},
	{"max_pods", func(v Vars) int { return v.MaxPods }},
}

// VarsFor returns the variables of an instance type with facts info: its ENIs on
// the default network card, its IPv4 addresses per ENI and their standard max
// pods. It fails when info lacks either count.
func VarsFor(info maxpods.TypeInfo) (Vars, error) {
	n, err := maxpods.Classic(info)
	if err != nil {
		return Vars{}, fmt.Errorf("%s needs the instance type's ENIs and IPv4 addresses per ENI: %w", Field, err)
	}
	return Vars{DefaultENIs: info.ENIs, IPsPerENI: info.IPv4PerENI, MaxPods: n}, nil
}

// String returns the variables as CEL assignments, for messages:
// "default_enis=4 ips_per_eni=15 max_pods=58".
func (v Vars) String() string {
	f := make([]string, len(variables))
	for i, x := range variables {
		f[i] = x.name + "=" + strconv.Itoa(x.get(v))
	}
	return strings.Join(f, " ")
}

// Check reports whether expression is a valid max pods expression for every
// instance type: it parses and type-checks it and bounds its cost, without any
// facts. The error is one line naming Field and what is allowed. A checked
// expression can still fail in Evaluate, on the numbers of one instance type
// (a result out of range, a division by zero, an overflow).
func Check(expression string) error {
	_, err := compile(expression)
	return err
}

// Evaluate returns the max pods that expression gives for the instance type
// whose facts are vars: a number from 1 to MaxResult (a double is truncated
// toward zero). The error is one line naming Field, the facts when they matter,
// and what is allowed.
func Evaluate(expression string, vars Vars) (int32, error) {
	prg, err := compile(expression)
	if err != nil {
		return 0, err
	}
	in := make(map[string]any, len(variables))
	for _, x := range variables {
		in[x.name] = int64(x.get(vars))
	}
	out, _, err := prg.Eval(in)
	if err != nil {
		return 0, fail(expression, "with %s: %s; want a whole number of pods from 1 to %d", vars, oneLine(err.Error()), MaxResult)
	}
	n, err := result(out)
	if err != nil {
		return 0, fail(expression, "with %s: %v; want a whole number of pods from 1 to %d", vars, err, MaxResult)
	}
	return n, nil
}

// result converts an evaluation's value to max pods: an int, a uint or a double
// (truncated toward zero, as CEL's int() and nodeadm do) from 1 to MaxResult.
func result(v ref.Val) (int32, error) {
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
		c := x.ConvertToType(types.IntType)
		i, ok := c.(types.Int)
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

// compile parses and checks expression in the cut-down environment and bounds its
// cost, returning the program to run.
func compile(expression string) (cel.Program, error) {
	switch {
	case strings.TrimSpace(expression) == "":
		return nil, fail(expression, "is empty; %s", want())
	case len(expression) > MaxLength:
		return nil, fail(expression, "is %d bytes long, more than %d", len(expression), MaxLength)
	}
	e, err := environment()
	if err != nil {
		return nil, fmt.Errorf("%s: building the CEL environment: %w", Field, err)
	}
	ast, iss := e.Compile(expression)
	if err := iss.Err(); err != nil {
		return nil, fail(expression, "%s; %s", issues(iss.Errors()), want())
	}
	switch t := ast.OutputType(); {
	case t.IsExactType(types.IntType), t.IsExactType(types.UintType), t.IsExactType(types.DoubleType):
	default:
		return nil, fail(expression, "gives a %s, not a number; %s", t, want())
	}
	est, err := e.EstimateCost(ast, noSizes{})
	if err != nil {
		return nil, fail(expression, "estimating its cost: %v", err)
	}
	if est.Max > CostLimit {
		return nil, fail(expression, "costs up to %d to evaluate, more than %d: write a shorter expression", est.Max, CostLimit)
	}
	prg, err := e.Program(ast, cel.CostLimit(CostLimit))
	if err != nil {
		return nil, fail(expression, "%s", oneLine(err.Error()))
	}
	return prg, nil
}

// environment is the cut-down CEL environment, built once on first use: a boot
// without an expression never builds it.
var environment = sync.OnceValues(newEnvironment)

// newEnvironment builds the cut-down CEL environment.
func newEnvironment() (*cel.Env, error) {
	opts := []cel.EnvOption{
		cel.StdLib(cel.StdLibSubset(subset())),
		cel.ParserExpressionSizeLimit(MaxLength),
		cel.ParserRecursionLimit(maxDepth),
	}
	for _, x := range variables {
		opts = append(opts, cel.Variable(x.name, cel.IntType))
	}
	return cel.NewCustomEnv(opts...)
}

// subset is the part of CEL's standard library an expression may use: the
// numeric overloads of the arithmetic and comparison operators, logic, the
// conditional, int() and double() of numbers, and no macros.
func subset() *env.LibrarySubset {
	fn := func(name string, ids ...string) *env.Function {
		o := make([]*env.Overload, len(ids))
		for i, id := range ids {
			o[i] = &env.Overload{ID: id}
		}
		return env.NewFunction(name, o...)
	}
	// Numbers of one type only: nodeadm's environment, like CEL's default, has no
	// comparison across numeric types (CrossTypeNumericComparisons).
	numeric := func(op string) []string {
		return []string{op + "_int64", op + "_uint64", op + "_double"}
	}
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

// noSizes is the cost estimator of an environment with no variable-sized values:
// cel-go's own estimates apply to everything.
type noSizes struct{}

func (noSizes) EstimateSize(checker.AstNode) *checker.SizeEstimate { return nil }

func (noSizes) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// want says what an expression may contain, for errors.
func want() string {
	names := make([]string, len(variables))
	for i, x := range variables {
		names[i] = x.name
	}
	return "want CEL over " + strings.Join(names, ", ") +
		" and numbers with + - * / %, == != < <= > >=, && || !, c ? a : b, int() and double()"
}

// issues joins CEL's compile errors into one line, each with its column, with
// undeclared names and missing overloads said plainly.
func issues(errs []*common.Error) string {
	f := make([]string, 0, len(errs))
	for _, e := range errs {
		msg := oneLine(e.Message)
		if rest, ok := strings.CutPrefix(msg, "undeclared reference to '"); ok {
			if name, _, ok := strings.Cut(rest, "'"); ok {
				msg = "unknown name " + strconv.Quote(name)
				if d, ok := operator(name); ok {
					msg = d + " is not allowed"
				}
			}
		} else if rest, ok := strings.CutPrefix(msg, "found no matching overload for '"); ok {
			if name, args, ok := strings.Cut(rest, "' applied to '"); ok {
				d, ok := operator(name)
				if !ok {
					d = name + "()"
				}
				msg = d + " does not take " + strings.TrimSuffix(args, "'")
			}
		}
		if c := e.Location.Column(); c >= 0 {
			msg = fmt.Sprintf("column %d: %s", c+1, msg)
		}
		f = append(f, msg)
	}
	return strings.Join(f, ", ")
}

// operator returns how an operator's function name is written in an expression:
// "<" for "_<_", "indexing" for "_[_]"; false for a name that is no operator.
func operator(name string) (string, bool) {
	switch name {
	case operators.Index, operators.OptIndex:
		return "indexing", true
	case operators.Conditional:
		return "?:", true
	}
	if d, ok := operators.FindReverse(name); ok && d != "" {
		return d, true
	}
	return "", false
}

// fail returns an error naming Field and an excerpt of the expression.
func fail(expression, format string, args ...any) error {
	return errors.New(Field + " " + excerpt(expression) + ": " + fmt.Sprintf(format, args...))
}

// excerpt quotes expression, shortened to its first 60 bytes.
func excerpt(s string) string {
	const n = 60
	if len(s) <= n {
		return strconv.Quote(s)
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return strconv.Quote(s[:i]) + "..."
}

// oneLine folds a message onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
