// Package testtools holds what several packages' tests need from outside Go: the
// static eksboot binary (and eksboot-render beside it), built once per test binary,
// and external tools (strace, packer, shellcheck, systemd-analyze) that CI must have.
// It exists so those rules (how the binary is built, when a missing tool is a skip
// and when a failure) live in one place. It also holds CompareTrees, the comparison
// of written (or served) trees that the blackbox, packer and imdstest tests share.
// Tests only.
package testtools

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/internal/selfsigned"
)

// RequireEnv is the environment variable that, set to "1" (CI sets it), turns a
// missing tool from a skip into a failure.
const RequireEnv = "EKSBOOT_REQUIRE_TOOLS"

// NodeTags are the build tags of the node image's eksboot (make build's bin/eksboot).
const NodeTags = "node"

// BuildEksboot builds the static eksboot binary (CGO_ENABLED=0) from the main package
// in dir, with the node tag as make build does (cmd/eksboot then leaves render to
// eksboot-render), into a new temporary folder, and returns its path and a function that
// removes the folder. Each of siblings, the directory of another main package, is
// built into the same folder under that directory's name, as make build puts
// bin/eksboot-render beside bin/eksboot (BuildEksboot(".", "../eksboot-render") in
// cmd/eksboot). Call it from TestMain.
func BuildEksboot(dir string, siblings ...string) (string, func(), error) {
	tmp, err := os.MkdirTemp("", "eksboot-test-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { _ = os.RemoveAll(tmp) }
	bin := filepath.Join(tmp, "eksboot")
	builds := [][2]string{{bin, dir}}
	for _, s := range siblings {
		builds = append(builds, [2]string{filepath.Join(tmp, filepath.Base(s)), s})
	}
	for _, b := range builds {
		build := exec.Command("go", "build", "-tags", NodeTags, "-o", b[0], b[1])
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			cleanup()
			return "", nil, fmt.Errorf("go build %s: %w\n%s", b[1], err, out)
		}
	}
	return bin, cleanup, nil
}

// MainWithEksboot is a TestMain body: it builds the binary from dir (and siblings
// beside it, as BuildEksboot does), stores its path in *bin, runs the tests and exits
// with their status.
func MainWithEksboot(m *testing.M, dir string, bin *string, siblings ...string) {
	path, cleanup, err := BuildEksboot(dir, siblings...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bin = path
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// BuildRelease runs make package's program (tools/release, at dir from the test's
// folder) for arch into out, writing the formats (rpm, deb, tar.gz) and
// SHA256SUMS, and returns its output.
func BuildRelease(dir, out, arch string, formats ...string) (string, error) {
	cmd := exec.Command("go", "run", "-C", dir, ".", "-out", out, "-arch", arch, "-formats", strings.Join(formats, ","), "package")
	b, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("tools/release package: %w\n%s", err, b)
	}
	return string(b), nil
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

// CompareTrees reports, in path order, every entry that is missing from got, is in got
// but not in want, or differs: for trees of files (path -> content, as the tests that
// write into a root read them back) or of served paths.
func CompareTrees(t testing.TB, got, want map[string]string) {
	t.Helper()
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		g, gok := got[k]
		w, wok := want[k]
		switch {
		case !gok:
			t.Errorf("%s: missing (want %.80q)", k, w)
		case !wok:
			t.Errorf("%s: not expected (got %.80q)", k, g)
		case g != w:
			t.Errorf("%s differs:\n got: %.200q\nwant: %.200q", k, g, w)
		}
	}
}

// SelfSignedCA returns the DER of a throw-away self-signed CA certificate, for the
// tests of values that must (or must never) be a certificate.
func SelfSignedCA(t testing.TB) []byte {
	t.Helper()
	der, err := selfsigned.CA("kubernetes", time.Now(), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return der
}
