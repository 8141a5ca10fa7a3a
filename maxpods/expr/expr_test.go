package expr

import (
	"strings"
	"testing"

	"github.com/eksboot/eksboot/maxpods"
)

// m4xlarge are the variables of the instance type of nodeadm's e2e cases
// (4 ENIs of 15 addresses: max pods 4*14+2 = 58).
var m4xlarge = Vars{DefaultENIs: 4, IPsPerENI: 15, MaxPods: 58}

// t3medium are the variables of nodeadm's unit tests (3 ENIs of 6 addresses).
var t3medium = Vars{DefaultENIs: 3, IPsPerENI: 6, MaxPods: 17}

func TestEvaluateGivesWhatNodeadmGives(t *testing.T) {
	for _, tc := range []struct {
		name       string
		expression string
		vars       Vars
		want       int32
	}{
		// nodeadm's e2e cases (test/e2e/cases/custom-max-pods-expression): maxPods in
		// the generated kubelet config.
		{"e2e custom networking, one ENI fewer", "((default_enis -1) * (ips_per_eni - 1)) + 2", m4xlarge, 44},
		{"e2e offset of the standard value", "max_pods + 2", m4xlarge, 60},
		// nodeadm's documented use cases (doc/examples.md).
		{"doc offset", "max_pods + 2", t3medium, 19},
		{"doc fixed limit, above", "max_pods < 30 ? max_pods : 30", Vars{MaxPods: 35}, 30},
		{"doc fixed limit, below", "max_pods < 30 ? max_pods : 30", t3medium, 17},
		{"doc three ENIs reserved", "((default_enis - 3) * (ips_per_eni - 1)) + 2", m4xlarge, 16},
		{"doc max_pods spelled out", "(default_enis * (ips_per_eni - 1)) + 2", t3medium, 17},
		// nodeadm's unit tests of the evaluation.
		{"a literal", "417", Vars{}, 417},
		{"prefix delegation, unbounded", "(default_enis * ((ips_per_eni - 1) * 16)) + 2", t3medium, 242},
		{"prefix delegation, bounded", "((default_enis * ((ips_per_eni * 16) - 1)) + 2) < 30 ? ((default_enis * ((ips_per_eni * 16) - 1)) + 2) : 30", t3medium, 30},
		{"max_pods as is", "max_pods", Vars{MaxPods: 7}, 7},
		{"max_pods offset on odd facts", "max_pods + 2", Vars{DefaultENIs: 999, IPsPerENI: 9999, MaxPods: 7}, 9},
		{"the 110 cap", "max_pods < 110 ? max_pods : 110", m4xlarge, 58},
		// The rest of the language.
		{"a percentage with int and double", "int(double(max_pods) * 0.9)", m4xlarge, 52},
		{"a double result is truncated toward zero", "double(max_pods) / 2.0 + 0.9", m4xlarge, 29},
		{"a uint result", "10u", Vars{}, 10},
		{"modulo", "max_pods - max_pods % 10", m4xlarge, 50},
		{"integer division truncates", "max_pods / 4", m4xlarge, 14},
		{"unary minus", "-(-max_pods)", m4xlarge, 58},
		{"logic", "default_enis >= 4 && !(ips_per_eni < 10) || false ? 1 : 2", m4xlarge, 1},
		{"equality", "max_pods == 58 ? 100 : 1", m4xlarge, 100},
		{"the largest result", "65535", Vars{}, MaxResult},
		{"space around the expression", "  max_pods\n", m4xlarge, 58},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := Check(tc.expression); err != nil {
				t.Fatalf("Check(%q): %v", tc.expression, err)
			}
			got, err := Evaluate(tc.expression, tc.vars)
			if err != nil {
				t.Fatalf("Evaluate(%q, %v): %v", tc.expression, tc.vars, err)
			}
			if got != tc.want {
				t.Errorf("Evaluate(%q, %v) = %d, want %d", tc.expression, tc.vars, got, tc.want)
			}
		})
	}
}

// wantLanguage ends every error about what an expression may contain.
const wantLanguage = "; want CEL over default_enis, ips_per_eni, max_pods and numbers with + - * / %, == != < <= > >=, && || !, c ? a : b, int() and double()"

func TestCheckRejectsWhatIsNotAMaxPodsExpression(t *testing.T) {
	nested := strings.Repeat("(", 40) + "1" + strings.Repeat(")", 40)
	group := "(" + strings.TrimSuffix(strings.Repeat("1+", 10), "+") + ")"
	groups := "(" + strings.TrimSuffix(strings.Repeat(group+"+", 10), "+") + ")"
	costly := strings.TrimSuffix(strings.Repeat(groups+"+", 4), "+")
	for _, tc := range []struct {
		name       string
		expression string
		want       string
	}{
		{"empty", "", `spec.kubelet.maxPodsExpression "": is empty` + wantLanguage},
		{"blank", " \t", `spec.kubelet.maxPodsExpression " \t": is empty` + wantLanguage},
		{"unknown variable (nodeadm's test)", "99 - fake_variable", `spec.kubelet.maxPodsExpression "99 - fake_variable": column 6: unknown name "fake_variable"` + wantLanguage},
		{"a later nodeadm variable", "vcpus * 10", `spec.kubelet.maxPodsExpression "vcpus * 10": column 1: unknown name "vcpus"` + wantLanguage},
		{"a bool (nodeadm's test)", "true", `spec.kubelet.maxPodsExpression "true": gives a bool, not a number` + wantLanguage},
		{"a string", `"42"`, `spec.kubelet.maxPodsExpression "\"42\"": column 1: strings are not allowed` + wantLanguage},
		{"a list", "[1, 2]", `spec.kubelet.maxPodsExpression "[1, 2]": column 1: lists and indexing are not allowed` + wantLanguage},
		{"int plus double", "max_pods + 0.5", `spec.kubelet.maxPodsExpression "max_pods + 0.5": column 10: + does not take (int, double)` + wantLanguage},
		{"int compared with double, as in nodeadm", "max_pods > 57.5 ? 1 : 2", `spec.kubelet.maxPodsExpression "max_pods > 57.5 ? 1 : 2": column 10: > does not take (int, double)` + wantLanguage},
		{"branches of two types", "max_pods > 1 ? 1 : 2.0", `spec.kubelet.maxPodsExpression "max_pods > 1 ? 1 : 2.0": column 14: ?: does not take (bool, int, double)` + wantLanguage},
		{"string comparison", "'a' < 'b' ? 1 : 2", `spec.kubelet.maxPodsExpression "'a' < 'b' ? 1 : 2": column 1: strings are not allowed` + wantLanguage},
		{"string concatenation", "'a' + 'b'", `spec.kubelet.maxPodsExpression "'a' + 'b'": column 1: strings are not allowed` + wantLanguage},
		{"int of a string", "int('5')", `spec.kubelet.maxPodsExpression "int('5')": column 5: strings are not allowed` + wantLanguage},
		{"a string function", "size('abc')", `spec.kubelet.maxPodsExpression "size('abc')": column 6: strings are not allowed` + wantLanguage},
		{"a method", "max_pods.size()", `spec.kubelet.maxPodsExpression "max_pods.size()": column 9: fields and methods are not allowed` + wantLanguage},
		{"a regular expression", "'x'.matches('x') ? 1 : 2", `spec.kubelet.maxPodsExpression "'x'.matches('x') ? 1 : 2": column 1: strings are not allowed` + wantLanguage},
		{"a timestamp", "timestamp('2020-01-01T00:00:00Z')", `spec.kubelet.maxPodsExpression "timestamp('2020-01-01T00:00:00Z')": column 11: strings are not allowed` + wantLanguage},
		{"dyn", "dyn(1)", `spec.kubelet.maxPodsExpression "dyn(1)": column 4: unknown name "dyn"` + wantLanguage},
		{"min is not CEL's", "min(max_pods, 30)", `spec.kubelet.maxPodsExpression "min(max_pods, 30)": column 4: unknown name "min"` + wantLanguage},
		{"a macro", "has(a.b) ? 1 : 2", `spec.kubelet.maxPodsExpression "has(a.b) ? 1 : 2": column 4: unknown name "has"` + wantLanguage},
		{"a comprehension", "[1].all(x, x > 0) ? 1 : 2", `spec.kubelet.maxPodsExpression "[1].all(x, x > 0) ? 1 : 2": column 1: lists and indexing are not allowed` + wantLanguage},
		{"indexing", "[1, 2][0]", `spec.kubelet.maxPodsExpression "[1, 2][0]": column 1: lists and indexing are not allowed` + wantLanguage},
		{"in", "1 in [1] ? 1 : 2", `spec.kubelet.maxPodsExpression "1 in [1] ? 1 : 2": column 3: in is not allowed` + wantLanguage},
		{"syntax", "(max_pods + ", `spec.kubelet.maxPodsExpression "(max_pods + ": column 13: the expression ends too early` + wantLanguage},
		{"too deep", nested, `spec.kubelet.maxPodsExpression "((((((((((((((((((((((((((((((((((((((((1)))))))))))))))))))"...: column 33: nested more than 32 levels deep` + wantLanguage},
		{"too long", strings.Repeat("1+", 512) + "1", `spec.kubelet.maxPodsExpression "1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+"...: is 1025 bytes long, more than 1024`},
		{"too costly", costly, `spec.kubelet.maxPodsExpression "((1+1+1+1+1+1+1+1+1+1)+(1+1+1+1+1+1+1+1+1+1)+(1+1+1+1+1+1+1+"...: costs up to 399 to evaluate, more than 256: write a shorter expression`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.expression)
			if err == nil {
				t.Fatalf("Check(%q) = nil, want %s", tc.expression, tc.want)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("Check(%q)\n got %s\nwant %s", tc.expression, got, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("Check(%q): the error has more than one line", tc.expression)
			}
			if _, evalErr := Evaluate(tc.expression, m4xlarge); evalErr == nil || evalErr.Error() != err.Error() {
				t.Errorf("Evaluate(%q) = %v, want Check's error", tc.expression, evalErr)
			}
		})
	}
}

func TestEvaluateRejectsResultsThatAreNoMaxPods(t *testing.T) {
	const want = "; want a whole number of pods from 1 to 65535"
	for _, tc := range []struct {
		name       string
		expression string
		vars       Vars
		wantErr    string
	}{
		{
			"zero (nodeadm's test)", "max_pods - ((default_enis * (ips_per_eni - 1)) + 2)", t3medium,
			`spec.kubelet.maxPodsExpression "max_pods - ((default_enis * (ips_per_eni - 1)) + 2)": with default_enis=3 ips_per_eni=6 max_pods=17: the result is 0` + want,
		},
		{
			"negative (nodeadm's test)", "max_pods - 2",
			Vars{MaxPods: 1},
			`spec.kubelet.maxPodsExpression "max_pods - 2": with default_enis=0 ips_per_eni=0 max_pods=1: the result is -1` + want,
		},
		{
			"negative on these facts only", "((default_enis - 5) * (ips_per_eni - 1)) + 2", m4xlarge,
			`spec.kubelet.maxPodsExpression "((default_enis - 5) * (ips_per_eni - 1)) + 2": with default_enis=4 ips_per_eni=15 max_pods=58: the result is -12` + want,
		},
		{
			"huge", "max_pods * 10000", m4xlarge,
			`spec.kubelet.maxPodsExpression "max_pods * 10000": with default_enis=4 ips_per_eni=15 max_pods=58: the result is 580000` + want,
		},
		{
			"one past the largest", "65536",
			Vars{},
			`spec.kubelet.maxPodsExpression "65536": with default_enis=0 ips_per_eni=0 max_pods=0: the result is 65536` + want,
		},
		{
			"above int32 (nodeadm's overflow test)", "default_enis * 2",
			Vars{DefaultENIs: 2147483647},
			`spec.kubelet.maxPodsExpression "default_enis * 2": with default_enis=2147483647 ips_per_eni=0 max_pods=0: the result is 4294967294` + want,
		},
		{
			"huge uint", "18446744073709551615u",
			Vars{},
			`spec.kubelet.maxPodsExpression "18446744073709551615u": with default_enis=0 ips_per_eni=0 max_pods=0: the result 18446744073709551615u is more than 65535` + want,
		},
		{
			"a double below one", "0.5",
			Vars{},
			`spec.kubelet.maxPodsExpression "0.5": with default_enis=0 ips_per_eni=0 max_pods=0: the result is 0` + want,
		},
		{
			"division by zero", "max_pods / (default_enis - 4)", m4xlarge,
			`spec.kubelet.maxPodsExpression "max_pods / (default_enis - 4)": with default_enis=4 ips_per_eni=15 max_pods=58: division by zero` + want,
		},
		{
			"modulus by zero", "max_pods % 0", m4xlarge,
			`spec.kubelet.maxPodsExpression "max_pods % 0": with default_enis=4 ips_per_eni=15 max_pods=58: modulus by zero` + want,
		},
		{
			"double division by zero", "double(max_pods) / 0.0", m4xlarge,
			`spec.kubelet.maxPodsExpression "double(max_pods) / 0.0": with default_enis=4 ips_per_eni=15 max_pods=58: the result +Inf is not a whole number in range` + want,
		},
		{
			"NaN", "0.0 / 0.0",
			Vars{},
			`spec.kubelet.maxPodsExpression "0.0 / 0.0": with default_enis=0 ips_per_eni=0 max_pods=0: the result NaN is not a whole number in range` + want,
		},
		{
			"integer overflow", "max_pods * 9223372036854775807", m4xlarge,
			`spec.kubelet.maxPodsExpression "max_pods * 9223372036854775807": with default_enis=4 ips_per_eni=15 max_pods=58: integer overflow` + want,
		},
		{
			"unsigned underflow", "1u - 2u",
			Vars{},
			`spec.kubelet.maxPodsExpression "1u - 2u": with default_enis=0 ips_per_eni=0 max_pods=0: unsigned integer overflow` + want,
		},
		{
			"int of a huge double", "int(1e300)",
			Vars{},
			`spec.kubelet.maxPodsExpression "int(1e300)": with default_enis=0 ips_per_eni=0 max_pods=0: integer overflow` + want,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := Check(tc.expression); err != nil {
				t.Fatalf("Check(%q): %v (the expression is valid; only its value is wrong)", tc.expression, err)
			}
			got, err := Evaluate(tc.expression, tc.vars)
			if err == nil {
				t.Fatalf("Evaluate(%q, %v) = %d, want an error", tc.expression, tc.vars, got)
			}
			if err.Error() != tc.wantErr {
				t.Errorf("Evaluate(%q, %v)\n got %s\nwant %s", tc.expression, tc.vars, err, tc.wantErr)
			}
		})
	}
}

func TestVarsForUsesTheTableFacts(t *testing.T) {
	info, ok := maxpods.Info("m4.xlarge")
	if !ok {
		t.Fatal("the table lacks m4.xlarge")
	}
	got, err := VarsFor(info)
	if err != nil {
		t.Fatal(err)
	}
	if got != m4xlarge {
		t.Errorf("VarsFor(m4.xlarge) = %v, want %v", got, m4xlarge)
	}
	if n, _ := maxpods.Lookup("m4.xlarge"); got.MaxPods != n {
		t.Errorf("max_pods = %d, want eni-max-pods.txt's %d", got.MaxPods, n)
	}
}

func TestVarsForNeedsTheENICounts(t *testing.T) {
	_, err := VarsFor(maxpods.TypeInfo{ENIs: 0, IPv4PerENI: 15})
	want := "spec.kubelet.maxPodsExpression needs the instance type's ENIs and IPv4 addresses per ENI: classic max pods: want positive ENIs and IPv4 addresses per ENI, got 0 and 15"
	if err == nil || err.Error() != want {
		t.Errorf("VarsFor(no ENIs) = %v, want %s", err, want)
	}
}

func TestVarsString(t *testing.T) {
	if got, want := m4xlarge.String(), "default_enis=4 ips_per_eni=15 max_pods=58"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func BenchmarkEvaluate(b *testing.B) {
	for b.Loop() {
		if _, err := Evaluate("((default_enis - 1) * (ips_per_eni - 1)) + 2", m4xlarge); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzEvaluate checks that no expression panics, that every error is one line
// naming the field, and that every result is a max pods.
func FuzzEvaluate(f *testing.F) {
	for _, s := range []string{
		"((default_enis -1) * (ips_per_eni - 1)) + 2", "max_pods + 2", "max_pods < 30 ? max_pods : 30",
		"int(double(max_pods) * 0.9)", "max_pods / (default_enis - 4)", "[1].all(x, x > 0)", "1u - 2u",
		"0.0 / 0.0", "'a' + 'b'", "((((1))))", "max_pods % 0", "-9223372036854775808 / -1",
	} {
		f.Add(s, 4, 15, 58)
	}
	f.Fuzz(func(t *testing.T, expression string, enis, ips, pods int) {
		checkErr := Check(expression)
		n, err := Evaluate(expression, Vars{DefaultENIs: enis, IPsPerENI: ips, MaxPods: pods})
		if checkErr != nil && (err == nil || err.Error() != checkErr.Error()) {
			t.Fatalf("Check(%q) = %v but Evaluate = %d, %v", expression, checkErr, n, err)
		}
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, Field+" ") || strings.Contains(msg, "\n") {
				t.Fatalf("Evaluate(%q): error not one line naming %s: %q", expression, Field, msg)
			}
			return
		}
		if n < 1 || n > MaxResult {
			t.Fatalf("Evaluate(%q) = %d, out of 1..%d", expression, n, MaxResult)
		}
	})
}
