package unitenvtest

import (
	"reflect"
	"testing"
)

// TestParse checks the helper itself against systemd's documented
// Environment= examples (systemd.exec(5)) and escapes.
func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		want    []string
		wantErr bool
	}{
		{
			"systemd.exec example", `"VAR1=word1 word2" VAR2=word3 "VAR3=$word 5 6"`,
			[]string{"VAR1=word1 word2", "VAR2=word3", "VAR3=$word 5 6"},
			false,
		},
		{"single quotes keep double quotes", `'A=x "y"'`, []string{`A=x "y"`}, false},
		{"double quotes keep single quotes", `"A=it's"`, []string{`A=it's`}, false},
		{"escapes in double quotes", `"A=\\ \" \t \x41 \u00e9 \101"`, []string{"A=\\ \" \t A é A"}, false},
		{"escape in single quotes", `'A=\\'`, []string{`A=\`}, false},
		{"quote in the middle of a word", `A="b c"d`, []string{"A=b cd"}, false},
		{"percent", `"A=100%%"`, []string{"A=100%"}, false},
		{"specifier", `"A=%n"`, nil, true},
		{"unterminated quote", `'A=b`, nil, true},
		{"unknown escape", `"A=\q"`, nil, true},
		{"trailing backslash", `A=b\`, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.value)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Parse(%q) error = %v, want error %v", tc.value, err, tc.wantErr)
			}
			if !tc.wantErr && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse(%q) = %q, want %q", tc.value, got, tc.want)
			}
		})
	}
}
