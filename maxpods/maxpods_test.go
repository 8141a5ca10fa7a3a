package maxpods

import (
	"bufio"
	"strconv"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/assets"
)

// assetsTable is the embedded eni-max-pods.txt.
func assetsTable() string { return assets.ENIMaxPods }

// dataRows returns the "<type> <max-pods>" rows of the embedded table, split
// independently of parseTable.
func dataRows(t *testing.T) [][2]string {
	t.Helper()
	var rows [][2]string
	sc := bufio.NewScanner(strings.NewReader(assets.ENIMaxPods))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			t.Fatalf("embedded table: malformed row %q", sc.Text())
		}
		rows = append(rows, [2]string{f[0], f[1]})
	}
	if len(rows) == 0 {
		t.Fatal("embedded table: no data rows")
	}
	return rows
}

func TestLookupEveryRow(t *testing.T) {
	for _, r := range dataRows(t) {
		want, err := strconv.Atoi(r[1])
		if err != nil {
			t.Fatalf("row %s: %v", r[0], err)
		}
		if got, ok := Lookup(r[0]); !ok || got != want {
			t.Errorf("Lookup(%q) = %d, %v; want %d, true", r[0], got, ok, want)
		}
	}
	if n := len(dataRows(t)); Types() != n {
		t.Errorf("Types() = %d, want %d (one per row of eni-max-pods.txt)", Types(), n)
	}
}

func TestLookupAllocatesNothing(t *testing.T) {
	names := []string{"m5.large", "u7in-32tb.224xlarge", "zz9.large", "", "m5.larg"}
	if n := testing.AllocsPerRun(100, func() {
		for _, s := range names {
			Lookup(s)
			Info(s)
		}
	}); n != 0 {
		t.Errorf("Lookup and Info: %v allocations per run, want 0", n)
	}
}

func TestTypeAtIsSortedAndFound(t *testing.T) {
	for i := range Types() {
		name := TypeAt(i)
		if i > 0 && TypeAt(i-1) >= name {
			t.Errorf("TypeAt(%d) = %q is not after %q", i, name, TypeAt(i-1))
		}
		if _, ok := Lookup(name); !ok {
			t.Errorf("Lookup(TypeAt(%d) = %q) found nothing", i, name)
		}
		if err := CheckInstanceType(name); err != nil {
			t.Errorf("CheckInstanceType(%q): %v", name, err)
		}
	}
}

func TestLookup(t *testing.T) {
	tests := []struct {
		name   string
		typ    string
		want   int
		wantOK bool
	}{
		{"a1.medium", "a1.medium", 8, true},
		{"t3.micro", "t3.micro", 4, true},
		{"t3.small", "t3.small", 11, true},
		{"m5.large", "m5.large", 29, true},
		{"m5.xlarge", "m5.xlarge", 58, true},
		{"m5.8xlarge", "m5.8xlarge", 234, true},
		{"c5.18xlarge", "c5.18xlarge", 737, true},
		{"p4d.24xlarge", "p4d.24xlarge", 737, true},
		{"trn1.32xlarge", "trn1.32xlarge", 247, true},
		{"c6in.32xlarge", "c6in.32xlarge", 394, true},
		{"m4.xlarge", "m4.xlarge", 58, true},
		{"c8a.48xlarge", "c8a.48xlarge", 1514, true},
		{"z1d.xlarge", "z1d.xlarge", 58, true},
		{"prefix of a type", "m5.larg", 0, false},
		{"type plus suffix", "m5.large2", 0, false},
		{"dot as any char", "m5xlarge", 0, false},
		{"family only", "m5", 0, false},
		{"regex", "^m5.large$", 0, false},
		{"wildcard", "m5.*", 0, false},
		{"upper case", "M5.LARGE", 0, false},
		{"trailing space", "m5.large ", 0, false},
		{"trailing newline", "m5.large\n", 0, false},
		{"whole row", "m5.large 29", 0, false},
		{"comment", "#", 0, false},
		{"empty", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Lookup(tc.typ)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("Lookup(%q) = %d, %v; want %d, %v", tc.typ, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestClassic(t *testing.T) {
	tests := []struct {
		name    string
		in      TypeInfo
		want    int
		wantErr string
	}{
		{"m5.large", TypeInfo{Hypervisor: "nitro", VCPUs: 2, ENIs: 3, IPv4PerENI: 10}, 29, ""},
		{"m5.8xlarge", TypeInfo{Hypervisor: "nitro", VCPUs: 32, ENIs: 8, IPv4PerENI: 30}, 234, ""},
		{"m4.xlarge", TypeInfo{Hypervisor: "xen", VCPUs: 4, ENIs: 4, IPv4PerENI: 15}, 58, ""},
		{"c6in.32xlarge card 0, no cap", TypeInfo{Hypervisor: "nitro", VCPUs: 128, ENIs: 8, IPv4PerENI: 50}, 394, ""},
		{"t3.micro", TypeInfo{Hypervisor: "nitro", VCPUs: 2, ENIs: 2, IPv4PerENI: 2}, 4, ""},
		{"bare metal, no hypervisor", TypeInfo{VCPUs: 96, ENIs: 15, IPv4PerENI: 50}, 737, ""},
		{"one address per ENI", TypeInfo{ENIs: 3, IPv4PerENI: 1}, 2, ""},
		{
			"zero ENIs",
			TypeInfo{Hypervisor: "nitro", VCPUs: 2, IPv4PerENI: 10},
			0,
			"classic max pods: want positive ENIs and IPv4 addresses per ENI, got 0 and 10",
		},
		{
			"zero IPv4",
			TypeInfo{Hypervisor: "nitro", VCPUs: 2, ENIs: 3},
			0,
			"classic max pods: want positive ENIs and IPv4 addresses per ENI, got 3 and 0",
		},
		{
			"negative",
			TypeInfo{ENIs: -1, IPv4PerENI: -1},
			0,
			"classic max pods: want positive ENIs and IPv4 addresses per ENI, got -1 and -1",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Classic(tc.in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Classic(%+v) error = %v, want %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Classic(%+v) = %d, %v; want %d, nil", tc.in, got, err, tc.want)
			}
		})
	}
}

// TestNearMissesAreNotFound: every name one edit away from a name of the table (a
// byte replaced, removed, added, or two neighbours swapped) is "not found" by
// Lookup and Info, unless it is itself a row of eni-max-pods.txt, when it gives
// that row's number. The hash finds one slot for any name, so only the name's
// comparison tells a new instance type (c7i.larg, c7i.xlarge2) from the one in
// that slot: without it, 11% of these names got another type's max pods.
func TestNearMissesAreNotFound(t *testing.T) {
	rows := map[string]int{}
	alphabet := map[byte]bool{'A': true, 'Z': true, '_': true, ' ': true, '/': true, 0: true, 0xff: true}
	for _, r := range dataRows(t) {
		n, err := strconv.Atoi(r[1])
		if err != nil {
			t.Fatal(err)
		}
		rows[r[0]] = n
		for i := 0; i < len(r[0]); i++ {
			alphabet[r[0][i]] = true
		}
	}
	probed, wrong := 0, 0
	check := func(name string) {
		probed++
		want, inTable := rows[name]
		got, found := Lookup(name)
		_, hasInfo := Info(name)
		if found != inTable || got != want || (hasInfo && !inTable) {
			if wrong++; wrong <= 10 {
				t.Errorf("Lookup(%q) = %d, %t; Info found %t; the table has %d, %t", name, got, found, hasInfo, want, inTable)
			}
		}
	}
	for name := range rows {
		for i := 0; i <= len(name); i++ {
			if i < len(name) {
				check(name[:i] + name[i+1:]) // removed
				if i+1 < len(name) {
					check(name[:i] + name[i+1:i+2] + name[i:i+1] + name[i+2:]) // swapped
				}
			}
			for c := range alphabet {
				if i < len(name) && c != name[i] {
					check(name[:i] + string([]byte{c}) + name[i+1:]) // replaced
				}
				check(name[:i] + string([]byte{c}) + name[i:]) // added
			}
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d near misses answered wrong", wrong, probed)
	}
	t.Logf("%d near misses of %d names probed", probed, len(rows))
}
