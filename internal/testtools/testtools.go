// Package testtools holds what several packages' tests need from outside Go: the
// static eksboot binary, built once per test binary, and external tools (strace,
// packer, shellcheck, systemd-analyze) that CI must have. It exists so those rules
// (how the binary is built, when a missing tool is a skip and when a failure) live
// in one place. Tests only.
package testtools

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RequireEnv is the environment variable that, set to "1" (CI sets it), turns a
// missing tool from a skip into a failure.
const RequireEnv = "EKSBOOT_REQUIRE_TOOLS"

// BuildEksboot builds the static eksboot binary (CGO_ENABLED=0) from the main package
// in dir into a new temporary folder, and returns its path and a function that
// removes the folder. Call it from TestMain.
func BuildEksboot(dir string) (string, func(), error) {
	tmp, err := os.MkdirTemp("", "eksboot-test-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { _ = os.RemoveAll(tmp) }
	bin := filepath.Join(tmp, "eksboot")
	build := exec.Command("go", "build", "-o", bin, dir)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("go build %s: %w\n%s", dir, err, out)
	}
	return bin, cleanup, nil
}

// MainWithEksboot is a TestMain body: it builds the binary from dir, stores its path
// in *bin, runs the tests and exits with their status.
func MainWithEksboot(m *testing.M, dir string, bin *string) {
	path, cleanup, err := BuildEksboot(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bin = path
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// Require returns the path of the external tool name. When it is missing the test
// is skipped, or fails when RequireEnv is "1".
func Require(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("%s is not installed and %s=1: %v", name, RequireEnv, err)
		}
		t.Skipf("%s is not installed (apt-get install it; %s=1 makes this a failure)", name, RequireEnv)
	}
	return p
}
