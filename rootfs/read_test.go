package rootfs

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/eksboot/eksboot/internal/testtools"
)

// requireRoot skips the test when not root, or fails it when testtools.RequireEnv is
// "1" (CI), as a missing tool does.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv(testtools.RequireEnv) == "1" {
		t.Fatalf("this test needs root and %s=1", testtools.RequireEnv)
	}
	t.Skipf("this test needs root (%s=1 makes this a failure)", testtools.RequireEnv)
}

// within runs read in the background and fails the test when it has not returned
// within two seconds (before this change a FIFO blocked the read forever and
// /dev/zero read until memory ran out).
func within(t *testing.T, what string, read func() ([]byte, error)) ([]byte, error) {
	t.Helper()
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := read()
		done <- result{b, err}
	}()
	select {
	case res := <-done:
		return res.b, res.err
	case <-time.After(2 * time.Second):
		t.Fatalf("%s: still reading after 2s", what)
		return nil, nil
	}
}

func TestReadRefusesWhatIsNotARegularFile(t *testing.T) {
	r := newRoot(t)
	dropIns := filepath.Join(r.Dir(), "etc/eks/eksboot.d")
	must(t, os.MkdirAll(dropIns, 0o755))
	must(t, syscall.Mkfifo(filepath.Join(dropIns, "10-fifo.yaml"), 0o644))
	must(t, os.Symlink("10-fifo.yaml", filepath.Join(dropIns, "20-link-to-fifo.yaml")))
	tests := []struct{ name, path, want string }{
		{"fifo", "/etc/eks/eksboot.d/10-fifo.yaml", "read /etc/eks/eksboot.d/10-fifo.yaml: a named pipe (FIFO); refusing to read it"},
		{"link to a fifo", "/etc/eks/eksboot.d/20-link-to-fifo.yaml", "read /etc/eks/eksboot.d/20-link-to-fifo.yaml: a named pipe (FIFO); refusing to read it"},
		{"directory", "/etc/eks/eksboot.d", "read /etc/eks/eksboot.d: a directory; refusing to read it"},
	}
	if os.Geteuid() == 0 {
		// The node's own /dev/zero, which a drop-in links to: a device node under the root.
		must(t, os.MkdirAll(filepath.Join(r.Dir(), "dev"), 0o755))
		must(t, syscall.Mknod(filepath.Join(r.Dir(), "dev/zero"), syscall.S_IFCHR|0o666, 1<<8|5))
		must(t, os.Symlink("/dev/zero", filepath.Join(dropIns, "30-zero.yaml")))
		tests = append(tests, struct{ name, path, want string }{
			"link to /dev/zero", "/etc/eks/eksboot.d/30-zero.yaml",
			"read /etc/eks/eksboot.d/30-zero.yaml: a character device; refusing to read it",
		})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := within(t, tc.path, func() ([]byte, error) { return r.ReadFile(tc.path) })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadFile(%q) = %d bytes, %v; want an error containing %q", tc.path, len(b), err, tc.want)
			}
		})
	}
	t.Run("host /dev/zero", func(t *testing.T) {
		link := filepath.Join(t.TempDir(), "user-data")
		must(t, os.Symlink("/dev/zero", link))
		_, err := within(t, link, func() ([]byte, error) { return ReadRegularFile(link, 64<<10) })
		if want := link + ": a character device; refusing to read it"; err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("ReadRegularFile(%s -> /dev/zero) = %v, want an error containing %q", link, err, want)
		}
	})
}

func TestReadStopsAtTheLimit(t *testing.T) {
	r := newRoot(t)
	p := filepath.Join(r.Dir(), "etc/eks/eksboot.d/50-big.yaml")
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, bytes.Repeat([]byte("#"), 64<<10), 0o644))
	b, err := r.ReadFileLimit("/etc/eks/eksboot.d/50-big.yaml", 64<<10)
	if err != nil || len(b) != 64<<10 {
		t.Fatalf("a file of exactly the limit: %d bytes, %v", len(b), err)
	}
	must(t, os.WriteFile(p, bytes.Repeat([]byte("#"), 64<<10+1), 0o644))
	_, err = r.ReadFileLimit("/etc/eks/eksboot.d/50-big.yaml", 64<<10)
	if want := "read /etc/eks/eksboot.d/50-big.yaml: larger than the 65536 bytes allowed"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("one byte over the limit: %v, want an error containing %q", err, want)
	}
	// ReadFile's own limit: a template of DefaultReadLimit+1 bytes.
	must(t, os.WriteFile(p, bytes.Repeat([]byte("#"), DefaultReadLimit+1), 0o644))
	if _, err := r.ReadFile("/etc/eks/eksboot.d/50-big.yaml"); err == nil || !strings.Contains(err.Error(), "larger than the 4194304 bytes allowed") {
		t.Fatalf("ReadFile of DefaultReadLimit+1 bytes: %v, want the limit named", err)
	}
	// A missing file is still fs.ErrNotExist, named by its node path.
	_, err = r.ReadFile("/etc/eks/nope")
	if !errors.Is(err, fs.ErrNotExist) || err.Error() != "read /etc/eks/nope: no such file or directory" {
		t.Fatalf("missing file: %v, want fs.ErrNotExist naming /etc/eks/nope", err)
	}
}
