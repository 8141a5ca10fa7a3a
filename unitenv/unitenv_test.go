package unitenv

import "testing"

func TestCheckName(t *testing.T) {
	for name, ok := range map[string]bool{
		"KUBELET_ARGS": true, "_x": true, "a1": true,
		"": false, "1a": false, "A-B": false, "A B": false, "É": false, "A\nB": false,
	} {
		if err := CheckName(name); (err == nil) != ok {
			t.Errorf("CheckName(%q) = %v, want ok %v", name, err, ok)
		}
	}
}

func TestCheckValue(t *testing.T) {
	for value, ok := range map[string]bool{
		"": true, "--a=b c": true, "tab\there": true, "ünï %% $HOME 'q' \"d\" \\": true,
		"a\nb": false, "nul\x00": false, "esc\x1b[31m": false, "c1\u0085": false, "\xff": false,
	} {
		if err := CheckValue(value); (err == nil) != ok {
			t.Errorf("CheckValue(%q) = %v, want ok %v", value, err, ok)
		}
	}
}
