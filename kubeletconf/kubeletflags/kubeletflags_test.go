package kubeletflags

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
		if Known(m) || Has(m, "--v") || Version(m) != "" {
			t.Errorf("minor %d is known", m)
		}
	}
	if v := Version(34); v != "v1.34.4" {
		t.Errorf("Version(34) = %q", v)
	}
	if v := Version(38); v != "v1.38.0-beta.0" {
		t.Errorf("Version(38) = %q", v)
	}
}

// TestFlagsEksbootReliesOn checks facts about the kubelets that eksboot's version
// table is built on, each read in that version's cmd/kubelet/app/options.
func TestFlagsEksbootReliesOn(t *testing.T) {
	everywhere := []string{
		"--node-ip", "--hostname-override", "--v", "--config", "--kubeconfig",
		"--image-credential-provider-config", "--image-credential-provider-bin-dir", "--runtime-cgroups",
		"--cloud-provider", "--node-labels", "--register-with-taints", "--max-pods", "--help", "--version",
		"--container-runtime-endpoint", "--feature-gates", "--vmodule",
	}
	for _, m := range Minors() {
		for _, f := range everywhere {
			if !Has(m, f) {
				t.Errorf("kubelet 1.%d has no %s", m, f)
			}
		}
	}
	for _, tc := range []struct {
		flag         string
		lastWith     int // 0: never had it
		removedSince int // 0: never removed
	}{
		{"--pod-infra-container-image", 34, 35},
		{"--container-runtime", 26, 27},
		{"--network-plugin", 0, 0}, // dockershim's, gone in 1.24
		{"--cloud-config", 33, 34},
		{"--azure-container-registry-config", 29, 30},
		{"--logtostderr", 25, 26},
	} {
		for _, m := range Minors() {
			if got, want := Has(m, tc.flag), m <= tc.lastWith; got != want {
				t.Errorf("Has(%d, %q) = %v, want %v", m, tc.flag, got, want)
			}
			since, ok := Removed(m, tc.flag)
			wantOK := tc.removedSince != 0 && m >= tc.removedSince
			if ok != wantOK || (ok && since != tc.removedSince) {
				t.Errorf("Removed(%d, %q) = %d, %v; want %d, %v", m, tc.flag, since, ok, tc.removedSince, wantOK)
			}
		}
	}
}

func TestDeprecatedFlagsArePresent(t *testing.T) {
	if !Has(34, "--pod-infra-container-image") || !Deprecated(34, "--pod-infra-container-image") {
		t.Error("1.34: --pod-infra-container-image should be registered and deprecated")
	}
	if !Has(24, "--container-runtime") || !Deprecated(24, "--container-runtime") {
		t.Error("1.24: --container-runtime should be registered and deprecated")
	}
	if Deprecated(37, "--node-ip") || Deprecated(35, "--pod-infra-container-image") {
		t.Error("Deprecated is true for a flag that is current or gone")
	}
}

func TestFlagSpellings(t *testing.T) {
	for _, f := range []string{"--node-ip", "node-ip", "--node_ip", "node_ip"} {
		if !Has(37, f) {
			t.Errorf("Has(37, %q) = false", f)
		}
	}
	for _, f := range []string{"", "--", "-node-ip", "--node-ip=10.0.0.1", "--no-such-flag", "NODE-IP"} {
		if Has(37, f) {
			t.Errorf("Has(37, %q) = true", f)
		}
		if _, ok := Removed(37, f); ok {
			t.Errorf("Removed(37, %q) is ok", f)
		}
	}
}

func TestRemovedIsFalseForPresentAndUnknown(t *testing.T) {
	if _, ok := Removed(37, "--node-ip"); ok {
		t.Error("Removed(37, --node-ip) is ok")
	}
	if _, ok := Removed(39, "--pod-infra-container-image"); ok {
		t.Error("Removed on an unknown minor is ok")
	}
	if since, ok := Removed(37, "--storage-driver-db"); !ok || since != 37 {
		t.Errorf("Removed(37, --storage-driver-db) = %d, %v; want 37, true", since, ok)
	}
}

func TestNamesAreSortedAndUnique(t *testing.T) {
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Fatalf("names[%d] %q is not after %q", i, names[i], names[i-1])
		}
	}
	for _, m := range minors {
		for w, x := range m.deprecated {
			if x&^m.has[w] != 0 {
				t.Errorf("1.%d: a deprecated flag is not registered", m.minor)
			}
		}
	}
}

// TestIsBool checks flag kinds read in each version's sources: pflag's BoolVar
// (--fail-swap-on), a boolean of klog's standard library flag set taken in through
// PFlagFromGoFlag (--logtostderr, until 1.25), a boolean cadvisor defines on the
// global flag set (--enable-load-reader, until 1.36), --version (a value of its own
// type whose NoOptDefVal verflag sets to "true") and --help; and flags that take a
// value, klog's -v among them (a standard library Var whose Level has no IsBoolFlag).
func TestIsBool(t *testing.T) {
	for _, m := range Minors() {
		for _, f := range []string{"--fail-swap-on", "--version", "--help", "--seccomp-default", "fail_swap_on"} {
			if !IsBool(m, f) {
				t.Errorf("IsBool(%d, %q) = false", m, f)
			}
		}
		for _, f := range []string{"--v", "--node-ip", "--feature-gates", "--max-pods", "--config", "--vmodule", "--no-such-flag", ""} {
			if IsBool(m, f) {
				t.Errorf("IsBool(%d, %q) = true", m, f)
			}
		}
		if got, want := IsBool(m, "--logtostderr"), m <= 25; got != want {
			t.Errorf("IsBool(%d, --logtostderr) = %v, want %v", m, got, want)
		}
		if got, want := IsBool(m, "--enable-load-reader"), m <= 36; got != want {
			t.Errorf("IsBool(%d, --enable-load-reader) = %v, want %v", m, got, want)
		}
	}
	if IsBool(39, "--fail-swap-on") {
		t.Error("IsBool is true for an unknown minor")
	}
}

func TestLookupsAllocateNothing(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() {
		Has(37, "--node_ip")
		IsBool(37, "fail_swap_on")
		Deprecated(34, "--pod_infra_container_image")
		Removed(37, "--storage_driver_db")
	}); n != 0 {
		t.Errorf("%v allocations per lookup", n)
	}
}

func BenchmarkLookup(b *testing.B) {
	flags := []string{"--node-ip", "--fail-swap-on", "--no-such-flag", "--pod-infra-container-image", "node_labels"}
	for _, tc := range []struct {
		name string
		f    func(int, string) bool
	}{{"Has", Has}, {"IsBool", IsBool}, {"Deprecated", Deprecated}} {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				tc.f(24+i%15, flags[i%len(flags)])
			}
		})
	}
}
