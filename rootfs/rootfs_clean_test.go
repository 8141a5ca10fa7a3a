package rootfs

import (
	"path"
	"path/filepath"
	"testing"
)

// isCleanAbs and host's shortcut agree with path.Clean and filepath.Join, which
// they save Resolve from calling at every component.
func TestHostJoinsAsFilepathJoin(t *testing.T) {
	paths := []string{
		"/", "//", "/a", "/a/", "/a//b", "/a/./b", "/a/../b", "/..", "/.", "/a/b/c.json",
		"/a/.b", "/a/..b", "/a/b..", "a", "", "/etc/kubernetes/pki/ca.crt", "/a/b/.", "/a/b/..", "/ä/\x00/x",
	}
	for _, root := range []string{"/", "/tmp/root"} {
		r := &Root{dir: root}
		for _, p := range paths {
			if got, want := isCleanAbs(p), p != "" && p[0] == '/' && path.Clean(p) == p; got != want {
				t.Errorf("isCleanAbs(%q) = %v, want %v", p, got, want)
			}
			if got, want := r.host(p), filepath.Join(root, filepath.FromSlash(p)); got != want {
				t.Errorf("root %s: host(%q) = %q, want %q", root, p, got, want)
			}
		}
	}
	for _, dir := range []string{"/", "/a", "/a/b"} {
		for _, name := range []string{"b", ".b", "..b", "b.", "\\x"} {
			if got, want := joinName(dir, name), path.Join(dir, name); got != want {
				t.Errorf("joinName(%q, %q) = %q, want %q", dir, name, got, want)
			}
		}
	}
}

func FuzzHostJoinsAsFilepathJoin(f *testing.F) {
	for _, s := range []string{"/a/b", "/a/../b", "//", "/./", "/a/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if got, want := isCleanAbs(p), p != "" && p[0] == '/' && path.Clean(p) == p; got != want {
			t.Fatalf("isCleanAbs(%q) = %v, want %v", p, got, want)
		}
		for _, root := range []string{"/", "/tmp/root"} {
			r := &Root{dir: root}
			if got, want := r.host(p), filepath.Join(root, filepath.FromSlash(p)); got != want {
				t.Fatalf("root %s: host(%q) = %q, want %q", root, p, got, want)
			}
		}
	})
}
