package maxpods

import (
	"bufio"
	"encoding/csv"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/assets"
)

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

func TestEmbeddedTableParses(t *testing.T) {
	got, err := parseTable(assets.ENIMaxPods)
	if err != nil {
		t.Fatalf("parseTable(assets.ENIMaxPods): %v", err)
	}
	if want := len(dataRows(t)); len(got) != want {
		t.Errorf("parseTable: got %d types, want %d (one per data row)", len(got), want)
	}
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

func TestParseTable(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[string]int
		wantErr string
	}{
		{"rows and comments", "# header\n#\na.b 3\n\nc.d 17\n", map[string]int{"a.b": 3, "c.d": 17}, ""},
		{"no trailing newline", "a.b 3", map[string]int{"a.b": 3}, ""},
		{"only comments", "# x\n#\n", nil, "no data rows"},
		{"one field", "# x\na.b\n", nil, `line 2: want "<instance-type> <max-pods>", got "a.b"`},
		{"three fields", "a.b 3 4\n", nil, `line 1: want "<instance-type> <max-pods>", got "a.b 3 4"`},
		{"leading space", " a.b 3\n", nil, `line 1: want "<instance-type> <max-pods>", got " a.b 3"`},
		{"two spaces", "a.b  3\n", nil, `line 1: want "<instance-type> <max-pods>", got "a.b  3"`},
		{"not a number", "a.b x\n", nil, `line 1: max pods of a.b: want a positive integer, got "x"`},
		{"zero", "a.b 0\n", nil, `line 1: max pods of a.b: want a positive integer, got "0"`},
		{"negative", "a.b -4\n", nil, `line 1: max pods of a.b: want a positive integer, got "-4"`},
		{"duplicate", "a.b 3\na.b 4\n", nil, "line 2: duplicate instance type a.b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseTable(tc.in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("parseTable(%q) error = %v, want %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseTable(%q): %v", tc.in, err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("parseTable(%q) = %v, want %v", tc.in, got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("parseTable(%q)[%q] = %d, want %d", tc.in, k, got[k], v)
				}
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
		{"zero ENIs", TypeInfo{Hypervisor: "nitro", VCPUs: 2, IPv4PerENI: 10}, 0,
			"classic max pods: want positive ENIs and IPv4 addresses per ENI, got 0 and 10"},
		{"zero IPv4", TypeInfo{Hypervisor: "nitro", VCPUs: 2, ENIs: 3}, 0,
			"classic max pods: want positive ENIs and IPv4 addresses per ENI, got 3 and 0"},
		{"negative", TypeInfo{ENIs: -1, IPv4PerENI: -1}, 0,
			"classic max pods: want positive ENIs and IPv4 addresses per ENI, got -1 and -1"},
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

// TestClassicMatchesLimits checks Classic against every row of testdata/eni-limits.csv
// (EC2 facts per type, from aws/amazon-vpc-cni-k8s), and that the embedded table agrees
// with the formula for every type it shares with the CSV.
func TestClassicMatchesLimits(t *testing.T) {
	f, err := os.Open("testdata/eni-limits.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("reading eni-limits.csv: %v", err)
	}
	col := map[string]int{}
	for i, name := range recs[0] {
		col[name] = i
	}
	atoi := func(rec []string, name string) int {
		t.Helper()
		n, err := strconv.Atoi(rec[col[name]])
		if err != nil {
			t.Fatalf("%s: column %s: %v", rec[col["instance_type"]], name, err)
		}
		return n
	}
	shared := 0
	for _, rec := range recs[1:] {
		typ := rec[col["instance_type"]]
		in := TypeInfo{Hypervisor: rec[col["hypervisor"]], ENIs: atoi(rec, "enis"), IPv4PerENI: atoi(rec, "ipv4_per_eni")}
		want := atoi(rec, "classic_max_pods")
		if got, err := Classic(in); err != nil || got != want {
			t.Errorf("%s: Classic(%+v) = %d, %v; want %d", typ, in, got, err, want)
		}
		if got, ok := Lookup(typ); ok {
			shared++
			if got != want {
				t.Errorf("%s: Lookup = %d, classic formula gives %d", typ, got, want)
			}
		}
	}
	if shared == 0 {
		t.Error("no type of eni-limits.csv is in the embedded table")
	}
}
