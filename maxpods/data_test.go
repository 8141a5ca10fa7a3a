package maxpods

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"testing"
)

// sharedData is the team's reference copy of the data (absent outside the workspace).
const sharedData = "../../shared/data/"

// TestAssetsMatchSharedData checks that the repository's inputs are the reference
// data, when the reference is there to compare with.
func TestAssetsMatchSharedData(t *testing.T) {
	for _, name := range []string{"eni-limits.csv", "eni-max-pods.txt"} {
		ref, err := os.ReadFile(sharedData + name)
		if errors.Is(err, fs.ErrNotExist) {
			t.Skipf("no %s%s to compare with", sharedData, name)
		}
		must(t, err)
		got, err := os.ReadFile("../assets/" + name)
		must(t, err)
		if !bytes.Equal(got, ref) {
			t.Errorf("assets/%s differs from %s%s: copy it and run make generate", name, sharedData, name)
		}
	}
}

// TestEveryLimitsRow checks every row of eni-limits.csv against the table and the
// calculator: Lookup gives classic_max_pods (and cni_eni_max_pods_txt), Info gives the
// row's facts, Compute gives calc_recommended and calc_recommended_pd (the numbers
// max-pods-calculator.sh prints, capped; empty when vCPUs are unknown) and
// pd_max_pods_uncapped on nitro types.
func TestEveryLimitsRow(t *testing.T) {
	b, err := os.ReadFile("../assets/eni-limits.csv")
	must(t, err)
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	must(t, err)
	col := map[string]int{}
	for i, name := range recs[0] {
		col[name] = i
	}
	if len(recs)-1 != 1391 {
		t.Errorf("eni-limits.csv has %d rows, want 1391", len(recs)-1)
	}
	for _, rec := range recs[1:] {
		name := rec[col["instance_type"]]
		num := func(c string) int {
			t.Helper()
			if rec[col[c]] == "" {
				return 0
			}
			n, err := strconv.Atoi(rec[col[c]])
			if err != nil {
				t.Fatalf("%s: column %s: %v", name, c, err)
			}
			return n
		}
		if got, ok := Lookup(name); !ok || got != num("classic_max_pods") || got != num("cni_eni_max_pods_txt") {
			t.Errorf("Lookup(%q) = %d, %v; want classic_max_pods %d", name, got, ok, num("classic_max_pods"))
		}
		hyper := rec[col["hypervisor"]]
		if hyper == "unknown" {
			hyper = ""
		}
		want := TypeInfo{Hypervisor: hyper, VCPUs: num("vcpus"), MemoryMiB: int64(num("memory_mib")), ENIs: num("enis"), IPv4PerENI: num("ipv4_per_eni"), BareMetal: rec[col["bare_metal"]] == "true"}
		info, ok := Info(name)
		if !ok || info != want {
			t.Errorf("Info(%q) = %+v, %v; want %+v", name, info, ok, want)
			continue
		}
		for _, c := range []struct {
			column string
			o      Options
		}{
			{"calc_recommended", Options{CNIVersion: CNIVersion{1, 10, 0}}},
			{"calc_recommended_pd", Options{CNIVersion: CNIVersion{1, 10, 0}, PrefixDelegation: true}},
			{"classic_max_pods", Options{Uncapped: true}},
		} {
			r, err := Compute(info, c.o)
			switch {
			case rec[col[c.column]] == "":
				if err == nil {
					t.Errorf("%s: Compute(%+v) = %d, want an error (vCPUs unknown, %s empty)", name, c.o, r.MaxPods, c.column)
				}
			case err != nil || r.MaxPods != num(c.column):
				t.Errorf("%s: Compute(%+v) = %d, %v; want %s %d", name, c.o, r.MaxPods, err, c.column, num(c.column))
			}
		}
		if hyper == "nitro" {
			r, err := Compute(info, Options{PrefixDelegation: true, Uncapped: true})
			if err != nil || r.MaxPods != num("pd_max_pods_uncapped") {
				t.Errorf("%s: prefix delegation uncapped = %d, %v; want %d", name, r.MaxPods, err, num("pd_max_pods_uncapped"))
			}
		}
	}
}

// TestCalculatorExamples are the verified examples of max-pods-calculator.sh in
// maxpods-notes.md §4.3 (run against the repository's mocks), computed from the
// table's facts.
func TestCalculatorExamples(t *testing.T) {
	v := CNIVersion{1, 9, 0}
	tests := []struct {
		typ, name string
		o         Options
		want      int
	}{
		{"m5.8xlarge", "default", Options{CNIVersion: v}, 234},
		{"m5.8xlarge", "prefix delegation", Options{CNIVersion: v, PrefixDelegation: true}, 250},
		{"m5.8xlarge", "prefix delegation, show max", Options{CNIVersion: v, PrefixDelegation: true, Uncapped: true}, 3714},
		{"m5.8xlarge", "custom networking", Options{CNIVersion: v, CustomNetworking: true}, 205},
		{"m5.8xlarge", "prefix delegation, max ENI 2, show max", Options{CNIVersion: v, PrefixDelegation: true, MaxENI: 2, Uncapped: true}, 930},
		{"m4.xlarge", "default", Options{CNIVersion: v}, 58},
		{"m4.xlarge", "prefix delegation (xen: ignored)", Options{CNIVersion: v, PrefixDelegation: true}, 58},
		{"m4.xlarge", "prefix delegation, show max", Options{CNIVersion: v, PrefixDelegation: true, Uncapped: true}, 58},
		{"m4.xlarge", "custom networking", Options{CNIVersion: v, CustomNetworking: true}, 44},
		{"m4.xlarge", "prefix delegation, max ENI 2, show max", Options{CNIVersion: v, PrefixDelegation: true, MaxENI: 2, Uncapped: true}, 30},
		{"c6in.32xlarge", "default", Options{CNIVersion: v}, 250},
		{"c6in.32xlarge", "show max", Options{CNIVersion: v, Uncapped: true}, 394},
		{"c6in.32xlarge", "prefix delegation", Options{CNIVersion: v, PrefixDelegation: true}, 250},
		{"c6in.32xlarge", "prefix delegation, show max", Options{CNIVersion: v, PrefixDelegation: true, Uncapped: true}, 6274},
		{"c6in.32xlarge", "custom networking", Options{CNIVersion: v, CustomNetworking: true}, 250},
		{"c6in.32xlarge", "prefix delegation, max ENI 2, show max", Options{CNIVersion: v, PrefixDelegation: true, MaxENI: 2, Uncapped: true}, 1570},
	}
	for _, tc := range tests {
		t.Run(tc.typ+"/"+tc.name, func(t *testing.T) {
			info, ok := Info(tc.typ)
			if !ok {
				t.Fatalf("Info(%q): not in the table", tc.typ)
			}
			got, err := Compute(info, tc.o)
			if err != nil || got.MaxPods != tc.want {
				t.Errorf("Compute(%+v, %+v) = %d, %v; want %d", info, tc.o, got.MaxPods, err, tc.want)
			}
		})
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
