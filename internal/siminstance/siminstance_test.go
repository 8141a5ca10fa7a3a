package siminstance

import "testing"

func TestQuoteASCII(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "us-west-2", `"us-west-2"`},
		{"quote and backslash", `a"b\c`, `"a\"b\\c"`},
		{"short escapes", "\n\r\t\b\f", `"\n\r\t\b\f"`},
		{"other control and DEL", "\x01\x7f", `"\u0001\u007f"`},
		{"html kept", "<a>&", `"<a>&"`},
		{"latin", "é", `"\u00e9"`},
		{"astral", "😀", `"\ud83d\ude00"`},
		{"invalid utf-8", "\xff", `"\ufffd"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := quoteASCII(tt.in); got != tt.want {
				t.Errorf("quoteASCII(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}
