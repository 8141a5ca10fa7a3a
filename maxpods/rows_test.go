package maxpods

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParseRows(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Row
		wantBad []string
	}{
		{"rows, comments, blanks", "# header\n#\nm5.large 29\n\n  zz9.large\t58  \n", []Row{{3, "m5.large", 29}, {5, "zz9.large", 58}}, nil},
		{"no trailing newline", "zz9.large 58", []Row{{1, "zz9.large", 58}}, nil},
		{"CRLF", "zz9.large 58\r\n", []Row{{1, "zz9.large", 58}}, nil},
		{"empty file", "", nil, nil},
		{"one field", "zz9.large\nzz9.xlarge 8\n", []Row{{2, "zz9.xlarge", 8}}, []string{`line 1: want "<instance-type> <max-pods>", got "zz9.large"`}},
		{"three fields", "zz9.large 58 # note\n", nil, []string{`line 1: want "<instance-type> <max-pods>", got "zz9.large 58 # note"`}},
		{"bad name", "ZZ9.LARGE 58\n", nil, []string{`line 1: instance type "ZZ9.LARGE": 'Z' is not allowed; want <family>.<size> such as m5.large`}},
		{"not a number", "zz9.large many\n", nil, []string{`line 1: max pods of zz9.large: want a whole number from 1 to 65535, got "many"`}},
		{"zero", "zz9.large 0\n", nil, []string{`line 1: max pods of zz9.large: want a whole number from 1 to 65535, got "0"`}},
		{"too big", "zz9.large 65536\n", nil, []string{`line 1: max pods of zz9.large: want a whole number from 1 to 65535, got "65536"`}},
		{"duplicate: the first stands", "zz9.large 58\nzz9.large 20\n", []Row{{1, "zz9.large", 58}}, []string{"line 2: zz9.large is already on line 1 (that row is used)"}},
		{"long line is shortened", "x " + strings.Repeat("y", 100) + " z\n", nil, []string{`line 1: want "<instance-type> <max-pods>", got "x ` + strings.Repeat("y", 55) + `..."`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows, bad := ParseRows([]byte(tc.in))
			if !reflect.DeepEqual(rows, tc.want) {
				t.Errorf("rows = %+v, want %+v", rows, tc.want)
			}
			var gotBad []string
			for _, e := range bad {
				gotBad = append(gotBad, fmt.Sprintf("line %d: %s", e.Line, e.Reason))
			}
			if !reflect.DeepEqual(gotBad, tc.wantBad) {
				t.Errorf("bad = %q, want %q", gotBad, tc.wantBad)
			}
		})
	}
}

func TestParseRowsReadsTheTable(t *testing.T) {
	rows, bad := ParseRows([]byte(assetsTable()))
	if len(bad) != 0 || len(rows) != Types() {
		t.Fatalf("ParseRows(eni-max-pods.txt) = %d rows, %v; want %d rows and no errors", len(rows), bad, Types())
	}
}

func TestCheckInstanceType(t *testing.T) {
	tests := []struct{ in, wantErr string }{
		{"m5.large", ""},
		{"u-6tb1.metal", ""},
		{"c6in.metal-32xl", ""},
		{"p6-b200.48xlarge", ""},
		{"", "instance type is empty; want <family>.<size> such as m5.large"},
		{"m5", `instance type "m5": no '.'; want <family>.<size> such as m5.large`},
		{".large", `instance type ".large": empty part or misplaced '-'; want <family>.<size> such as m5.large`},
		{"m5.", `instance type "m5.": empty part or misplaced '-'; want <family>.<size> such as m5.large`},
		{"m5.large.x", `instance type "m5.large.x": '.' is not allowed; want <family>.<size> such as m5.large`},
		{"-m5.large", `instance type "-m5.large": empty part or misplaced '-'; want <family>.<size> such as m5.large`},
		{"u--6tb1.metal", `instance type "u--6tb1.metal": empty part or misplaced '-'; want <family>.<size> such as m5.large`},
		{"m5.large ", `instance type "m5.large ": ' ' is not allowed; want <family>.<size> such as m5.large`},
		{"m5.*", `instance type "m5.*": '*' is not allowed; want <family>.<size> such as m5.large`},
		{strings.Repeat("a", 63) + ".b", `instance type "` + strings.Repeat("a", 57) + `...": longer than 64 bytes; want <family>.<size> such as m5.large`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			err := CheckInstanceType(tc.in)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
				t.Errorf("CheckInstanceType(%q) = %v, want %q", tc.in, err, tc.wantErr)
			}
		})
	}
}

// FuzzParseRows checks that any input parses without panicking, that every row is
// valid and every line is accounted for at most once.
func FuzzParseRows(f *testing.F) {
	for _, s := range []string{"m5.large 29\n", "# c\n\nzz9.large\t58\r\n", "a.b 1\na.b 2\n", "x\n", assetsTable()} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, bad := ParseRows(data)
		lines := map[int]bool{}
		for _, r := range rows {
			if CheckInstanceType(r.InstanceType) != nil || r.MaxPods < 1 || r.MaxPods > maxRowPods || lines[r.Line] {
				t.Fatalf("invalid row %+v", r)
			}
			lines[r.Line] = true
		}
		for _, e := range bad {
			if lines[e.Line] || e.Line < 1 {
				t.Fatalf("line %d reported twice or out of range", e.Line)
			}
			lines[e.Line] = true
		}
	})
}
