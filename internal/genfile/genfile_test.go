package genfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteOrCheck(t *testing.T) {
	p := filepath.Join(t.TempDir(), "zz_generated.go")
	if err := WriteOrCheck(p, []byte("package x\n"), true, "", ""); err == nil {
		t.Error("check of a missing file: no error")
	}
	if err := WriteOrCheck(p, []byte("package x\n"), false, "", ""); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "package x\n" {
		t.Fatalf("wrote %q", b)
	}
	if err := WriteOrCheck(p, []byte("package x\n"), true, "", ""); err != nil {
		t.Errorf("check of a fresh file: %v", err)
	}
	err := WriteOrCheck(p, []byte("package y\n"), true, "its inputs changed", "make generate")
	if err == nil || !strings.Contains(err.Error(), "zz_generated.go is stale: its inputs changed; run `make generate` and commit it") {
		t.Errorf("check of a stale file: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "package x\n" {
		t.Errorf("a check wrote the file: %q", b)
	}
}
