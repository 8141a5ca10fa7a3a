package packer

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/internal/testtools"
)

// binary is the static eksboot binary built once for the package's tests, with
// eksboot-render beside it (renderBinary), where install.sh looks by default, as make
// build lays them out.
var binary string

func TestMain(m *testing.M) {
	testtools.MainWithEksboot(m, "../cmd/eksboot", &binary, "../cmd/eksboot-render")
}

// renderBinary is the eksboot-render built beside binary.
func renderBinary() string { return filepath.Join(filepath.Dir(binary), "eksboot-render") }

// needTools skips the test when a tool is missing, unless EKSBOOT_REQUIRE_TOOLS=1
// (CI), where a missing tool fails it.
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		testtools.Require(t, tool)
	}
}

// command runs name with args in dir and env (plus PATH and a private HOME and
// TMPDIR) and returns its exit status and combined output.
func command(t *testing.T, dir string, env []string, name string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TMPDIR=" + t.TempDir()}, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String()
	}
	t.Fatalf("run %s: %v", name, err)
	return 0, ""
}

// packerEnv keeps Packer from calling home (its checkpoint version check); command
// also gives it a private HOME, so it reads no user configuration.
var packerEnv = []string{"CHECKPOINT_DISABLE=1"}

// tree returns every entry under root, root itself left out: "dir 0755",
// "file 0644 <content>" or "link -> <target>", keyed by the slash path.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "link -> " + target
		case info.IsDir():
			out[rel] = fmt.Sprintf("dir %04o", info.Mode().Perm())
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("file %04o %s", info.Mode().Perm(), b)
		default:
			return fmt.Errorf("%s: unexpected file type %v", p, info.Mode().Type())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// withoutDirs returns the entries of a tree that are not directories.
func withoutDirs(entries map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range entries {
		if !strings.HasPrefix(v, "dir ") {
			out[k] = v
		}
	}
	return out
}

// copyTree copies the tree at src to dst (which must not exist), keeping modes
// and symlinks as they are.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case info.IsDir():
			if err := os.Mkdir(to, info.Mode().Perm()); err != nil {
				return err
			}
			return os.Chmod(to, info.Mode().Perm())
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := os.WriteFile(to, b, info.Mode().Perm()); err != nil {
				return err
			}
			return os.Chmod(to, info.Mode().Perm())
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// needRoot skips the test when not root, unless EKSBOOT_REQUIRE_TOOLS=1 (CI, which
// runs as root), where it fails.
func needRoot(t *testing.T, why string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv(testtools.RequireEnv) == "1" {
		t.Fatalf("needs root (%s) and %s=1", why, testtools.RequireEnv)
	}
	t.Skipf("needs root: %s", why)
}

// withEksbootScript puts $2 at /usr/bin/eksboot in a private mount namespace (an
// overlay on /usr/bin whose upper layer lives on a tmpfs mounted at $1) and runs the
// rest of its arguments there. The shim execs /usr/bin/eksboot by its absolute path,
// so this is how a test runs the real file against a binary of its choice without
// touching the machine's /usr/bin.
const withEksbootScript = `set -e
dir=$1 eksboot=$2
shift 2
mount -t tmpfs tmpfs "$dir"
mkdir "$dir/upper" "$dir/work"
ln -s "$eksboot" "$dir/upper/eksboot"
mount -t overlay overlay -o "lowerdir=/usr/bin,upperdir=$dir/upper,workdir=$dir/work" /usr/bin
exec "$@"`

// withEksboot runs name with args like command, with eksboot as /usr/bin/eksboot
// (seen only by that command; see withEksbootScript).
func withEksboot(t *testing.T, eksboot string, env []string, name string, args ...string) (int, string) {
	t.Helper()
	needRoot(t, "a private mount namespace puts the eksboot under test at /usr/bin/eksboot")
	needTools(t, "unshare", "mount")
	// Not t.TempDir(): a test name's commas would end up in the overlay's options.
	dir, err := os.MkdirTemp("", "eksboot-usr-bin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(dir) })
	argv := append([]string{
		"--mount", "--propagation", "private", "--", "sh", "-c", withEksbootScript,
		"sh", dir, eksboot, name,
	}, args...)
	return command(t, ".", env, "unshare", argv...)
}
