package kubeletgates

import (
	"slices"
	"testing"
)

func TestMinorsAre24To38(t *testing.T) {
	var want []int
	for m := 24; m <= 38; m++ {
		want = append(want, m)
	}
	if got := Minors(); !slices.Equal(got, want) {
		t.Errorf("Minors() = %v, want %v", got, want)
	}
	for _, m := range []int{23, 39, 0, -1} {
		if _, ok := Lookup(m, "AllAlpha"); ok || Known(m) || Version(m) != "" || Gates(m) != nil {
			t.Errorf("minor %d is known", m)
		}
		if _, ok := Removed(m, "DynamicResourceAllocation"); ok {
			t.Errorf("Removed(%d, ...) is ok", m)
		}
	}
	if v := Version(38); v != "v1.38.0-beta.0" {
		t.Errorf("Version(38) = %q", v)
	}
	if v := Version(37); v != "v1.37.2" {
		t.Errorf("Version(37) = %q", v)
	}
}

// TestGatesEksbootReliesOn checks facts read in each version's sources
// (pkg/features/kube_features.go, component-base's featuregate and logs/api/v1).
func TestGatesEksbootReliesOn(t *testing.T) {
	type want struct {
		ok bool
		g  Gate
	}
	dra := func(m int) want {
		g := Gate{Name: "DynamicResourceAllocation"}
		switch {
		case m < 26:
			return want{}
		case m <= 31:
			g.Stage = Alpha
		case m <= 33:
			g.Stage = Beta // default off
		case m == 34:
			g.Stage, g.Default = GA, true // GA, not locked: setting it false still works
		case m <= 37:
			g.Stage, g.Default, g.Locked = GA, true, true
		default:
			return want{} // removed in 1.38
		}
		return want{true, g}
	}
	csi := func(m int) want {
		g := Gate{Name: "MutableCSINodeAllocatableCount"}
		switch {
		case m < 33:
			return want{}
		case m == 33:
			g.Stage = Alpha
		case m == 34:
			g.Stage = Beta
		case m == 35:
			g.Stage, g.Default = Beta, true
		default:
			g.Stage, g.Default, g.Locked = GA, true, true // locked from 1.36
		}
		return want{true, g}
	}
	for _, m := range Minors() {
		for name, w := range map[string]want{
			"DynamicResourceAllocation":      dra(m),
			"MutableCSINodeAllocatableCount": csi(m),
			"AllAlpha":                       {true, Gate{Name: "AllAlpha", Stage: Alpha}},
			"AllBeta":                        {true, Gate{Name: "AllBeta", Stage: Beta}},
		} {
			if g, ok := Lookup(m, name); ok != w.ok || g != w.g {
				t.Errorf("Lookup(%d, %q) = %+v, %v; want %+v, %v", m, name, g, ok, w.g, w.ok)
			}
		}
		// component-base's logging gates, registered by cmd/kubelet's init:
		// ContextualLogging from 1.24, the two options gates from 1.25
		// (component-base/logs/api/v1).
		if _, ok := Lookup(m, "ContextualLogging"); !ok {
			t.Errorf("kubelet 1.%d has no ContextualLogging", m)
		}
		for _, n := range []string{"LoggingAlphaOptions", "LoggingBetaOptions"} {
			if _, ok := Lookup(m, n); ok != (m >= 25) {
				t.Errorf("Lookup(%d, %s) ok = %v", m, n, ok)
			}
		}
	}
	if since, ok := Removed(38, "DynamicResourceAllocation"); !ok || since != 38 {
		t.Errorf("Removed(38, DynamicResourceAllocation) = %d, %v; want 38, true", since, ok)
	}
	for _, m := range []int{24, 25, 37} {
		if _, ok := Removed(m, "DynamicResourceAllocation"); ok {
			t.Errorf("Removed(%d, DynamicResourceAllocation) is ok", m)
		}
	}
	// client-go's gates, adapted into the kubelet's from 1.30.
	if _, ok := Lookup(30, "WatchListClient"); !ok {
		t.Error("1.30 has no WatchListClient")
	}
	// k8s.io/apiserver's generic gates.
	if g, ok := Lookup(37, "APIResponseCompression"); !ok || g.Stage != Beta || !g.Default {
		t.Errorf("1.37 APIResponseCompression = %+v, %v", g, ok)
	}
}

func TestLookupIsExact(t *testing.T) {
	for _, n := range []string{"", "allalpha", "AllAlpha ", " AllAlpha", "AllAlpha=true", "DynamicResourceAllocation\x00"} {
		if _, ok := Lookup(37, n); ok {
			t.Errorf("Lookup(37, %q) is ok", n)
		}
	}
}

func TestStageString(t *testing.T) {
	for s, want := range map[Stage]string{Alpha: "ALPHA", Beta: "BETA", GA: "GA", Deprecated: "DEPRECATED", 0: "Stage(0)", 9: "Stage(9)"} {
		if got := s.String(); got != want {
			t.Errorf("Stage(%d).String() = %q, want %q", uint8(s), got, want)
		}
	}
}

// TestTableIsConsistent checks the generated table's invariants: names sorted and
// unique; each minor's stages disjoint, and each column a subset of the gates it has.
func TestTableIsConsistent(t *testing.T) {
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Fatalf("names[%d] %q is not after %q", i, names[i], names[i-1])
		}
	}
	for _, m := range minors {
		for w := range m.has {
			if (m.beta[w]&m.ga[w])|(m.beta[w]&m.deprecated[w])|(m.ga[w]&m.deprecated[w]) != 0 {
				t.Errorf("1.%d: a gate has two stages", m.minor)
			}
			for _, col := range []uint64{m.beta[w], m.ga[w], m.deprecated[w], m.on[w], m.locked[w]} {
				if col&^m.has[w] != 0 {
					t.Errorf("1.%d: a column holds a gate the minor does not have", m.minor)
				}
			}
			if m.unavailable[w]&m.has[w] != 0 {
				t.Errorf("1.%d: a gate is both available and not", m.minor)
			}
		}
		gates := Gates(m.minor)
		if !slices.IsSortedFunc(gates, func(a, b Gate) int { return compare(a.Name, b.Name) }) {
			t.Errorf("Gates(%d) is not sorted", m.minor)
		}
		for _, g := range gates {
			if l, ok := Lookup(m.minor, g.Name); !ok || l != g {
				t.Errorf("Gates(%d) has %+v, Lookup %+v, %v", m.minor, g, l, ok)
			}
		}
	}
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestLookupsAllocateNothing(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() {
		Lookup(37, "DynamicResourceAllocation")
		Lookup(38, "DynamicResourceAllocation")
		Removed(38, "DynamicResourceAllocation")
		Known(37)
	}); n != 0 {
		t.Errorf("%v allocations per lookup", n)
	}
}

func BenchmarkLookup(b *testing.B) {
	gates := []string{"DynamicResourceAllocation", "AllAlpha", "NoSuchGate", "MutableCSINodeAllocatableCount", "WatchList"}
	for i := 0; b.Loop(); i++ {
		Lookup(24+i%15, gates[i%len(gates)])
	}
}
