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
// The expression is at most MaxLength bytes and nested at most 32 levels deep (each
// parenthesis, argument and else branch is a level, and the right operand of a
// binary operator one more while it is parsed), and its cost at most CostLimit, in cel-go's measure (one unit per
// operator, function and variable reference; literals, && and || and ?: free;
// the dearer branch of ?:), checked from the parsed expression before anything is
// evaluated. Without macros there are no comprehensions, the only loops in CEL,
// so an evaluation visits each operator at most once and its cost never exceeds
// the checked one: there is nothing for a deadline to interrupt. Integer overflow
// and division by zero are errors, as CEL defines them.
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
// The evaluator is this package's own (lang.go), not cel-go: cel-go builds its
// protobuf descriptors at the package initialisation of every binary that links
// it, expression or not (about 2 ms of every start of eksboot, 1,900 allocations
// and 5.7 MB of stripped binary; docs/performance.md). cel-go is the tests'
// oracle: with the environment this package used to build (CEL's standard
// library cut down to the operators and functions above, macros off), every
// expression of a differential fuzz must be accepted by both or refused by both,
// with the same value or the same error (oracle_test.go). Where cel-go's cut-down
// environment accepted more, this package refuses it by name: string, bytes,
// list, map and null literals (which cel-go's == and ?: took), type names as
// values, and chains nested deeper than cel-go's parser allowed are the only
// differences, and only the last one accepts more.
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
	"unicode/utf8"

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
	n, err := compile(expression)
	if err != nil {
		return 0, err
	}
	var in [3]int64
	for i, x := range variables {
		in[i] = int64(x.get(vars))
	}
	out, err := eval(n, &in)
	if err != nil {
		return 0, fail(expression, "with %s: %v; want a whole number of pods from 1 to %d", vars, err, MaxResult)
	}
	r, err := result(out)
	if err != nil {
		return 0, fail(expression, "with %s: %v; want a whole number of pods from 1 to %d", vars, err, MaxResult)
	}
	return r, nil
}

// result converts an evaluation's value to max pods: an int, a uint or a double
// (truncated toward zero, as CEL's int() and nodeadm do) from 1 to MaxResult.
func result(v value) (int32, error) {
	var n int64
	switch v.t {
	case tInt:
		n = v.i
	case tUint:
		if v.u > MaxResult {
			return 0, fmt.Errorf("the result %du is more than %d", v.u, MaxResult)
		}
		n = int64(v.u)
	default: // a double: the checker let no other type through
		i, err := doubleToInt(v.d)
		if err != nil {
			return 0, fmt.Errorf("the result %v is not a whole number in range", v.d)
		}
		n = i
	}
	if n < 1 || n > MaxResult {
		return 0, fmt.Errorf("the result is %d", n)
	}
	return int32(n), nil
}

// compile parses and checks expression in the cut-down language and bounds its
// cost, returning the checked tree to evaluate.
func compile(expression string) (*node, error) {
	switch {
	case strings.TrimSpace(expression) == "":
		return nil, fail(expression, "is empty; %s", want())
	case len(expression) > MaxLength:
		return nil, fail(expression, "is %d bytes long, more than %d", len(expression), MaxLength)
	}
	n, err := parse(expression)
	if err != nil {
		return nil, fail(expression, "%v; %s", err, want())
	}
	if n.t == tBool {
		return nil, fail(expression, "gives a %s, not a number; %s", n.t, want())
	}
	if n.cost > CostLimit {
		return nil, fail(expression, "costs up to %d to evaluate, more than %d: write a shorter expression", n.cost, CostLimit)
	}
	return n, nil
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
