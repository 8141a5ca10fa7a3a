package maxpods_test

import (
	"testing"

	"github.com/eksboot/eksboot/maxpods"
	"github.com/eksboot/eksboot/maxpods/expr"
)

// TestVarsForAgreesWithTheTableForEveryType: nodeadm's default max-pods expression
// over expr's variables gives eni-max-pods.txt's value for every type of the table
// (here, not in expr: the table's walk is for this folder's tests only).
func TestVarsForAgreesWithTheTableForEveryType(t *testing.T) {
	for i := range maxpods.Types() {
		name := maxpods.TypeAt(i)
		info, ok := maxpods.Info(name)
		if !ok {
			continue
		}
		v, err := expr.VarsFor(info)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		got, err := expr.Evaluate("(default_enis * (ips_per_eni - 1)) + 2", v)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if n, ok := maxpods.Lookup(name); ok && int(got) != n {
			t.Errorf("%s: nodeadm's formula gives %d, eni-max-pods.txt %d", name, got, n)
		}
	}
}
