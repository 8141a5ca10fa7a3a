package testtools

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// ReadFile returns the content of path, failing the test if it cannot be read.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// CheckGolden compares got with the golden file path, or, with update (the test's
// -update flag), rewrites the file with it.
func CheckGolden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want := ReadFile(t, path); !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (rerun with -update if the change is intended)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
