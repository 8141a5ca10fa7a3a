package lazy

import (
	"sync"
	"testing"
)

var digits = Regexp{Expr: `^[0-9]+$`}

// TestRegexpCompilesOnceOnFirstUse: eight goroutines Get at once; make race runs
// it under the race detector, which finds a Get without its sync.Once.
func TestRegexpCompilesOnceOnFirstUse(t *testing.T) {
	if digits.re != nil {
		t.Fatal("compiled before its first use")
	}
	var wg sync.WaitGroup
	got := make([]bool, 8)
	for i := range got {
		wg.Go(func() { got[i] = digits.Get().MatchString("123") })
	}
	wg.Wait()
	for i, ok := range got {
		if !ok {
			t.Errorf("Get %d: did not match", i)
		}
	}
	if first := digits.Get(); first != digits.Get() || digits.Get().MatchString("12a") {
		t.Error("Get compiled again, or matched what it should not")
	}
}

func TestInvalidExpressionPanicsAtFirstGet(t *testing.T) {
	bad := Regexp{Expr: `(`}
	defer func() {
		if recover() == nil {
			t.Error("no panic for an invalid expression")
		}
	}()
	bad.Get()
}
