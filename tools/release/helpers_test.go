package main

import (
	"os"
	"os/exec"
	"testing"
)

// requireTool skips the test when name is not on PATH, unless
// EKSBOOT_REQUIRE_TOOLS=1 (CI), where a missing tool fails it.
func requireTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("EKSBOOT_REQUIRE_TOOLS") == "1" {
			t.Fatalf("%s is missing and EKSBOOT_REQUIRE_TOOLS=1", name)
		}
		t.Skipf("%s is missing", name)
	}
}
