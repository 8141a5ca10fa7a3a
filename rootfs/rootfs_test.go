package rootfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func newRoot(t *testing.T) *Root {
	t.Helper()
	r, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestResolveStaysUnderRoot(t *testing.T) {
	r := newRoot(t)
	outside := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(r.Dir(), "etc/real"), 0o755))
	must(t, os.Symlink("/etc/real", filepath.Join(r.Dir(), "etc/abs")))
	must(t, os.Symlink("../../../../..", filepath.Join(r.Dir(), "etc/up")))
	must(t, os.Symlink(outside, filepath.Join(r.Dir(), "etc/out")))
	must(t, os.Symlink("loop", filepath.Join(r.Dir(), "etc/loop")))
	tests := []struct {
		name, in, want string
		wantErr        bool
	}{
		{name: "plain", in: "/etc/kubernetes/x", want: "etc/kubernetes/x"},
		{name: "dotdot cannot climb", in: "/../../etc/x", want: "etc/x"},
		{name: "absolute link is rooted", in: "/etc/abs/f", want: "etc/real/f"},
		{name: "relative link out of the root is refused", in: "/etc/up/etc/f", wantErr: true},
		{name: "link to a host dir stays inside", in: "/etc/out/f", want: strings.TrimPrefix(outside, "/") + "/f"},
		{name: "loop", in: "/etc/loop/f", wantErr: true},
		{name: "relative path", in: "etc/x", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Resolve(tc.in)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("Resolve(%q) = %q, want an error", tc.in, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(r.Dir(), tc.want); got != want {
				t.Errorf("Resolve(%q) = %q, want %q", tc.in, got, want)
			}
		})
	}
}

func TestPlanApplyIsIdempotent(t *testing.T) {
	r := newRoot(t)
	files := []File{
		{Path: "/etc/a/one", Data: []byte("1\n"), Mode: 0o644},
		{Path: "/var/lib/two", Data: []byte("2\n"), Mode: 0o600, Secret: true},
	}
	changes, err := r.Plan(files, []string{"/etc/stale"})
	must(t, err)
	if len(changes) != 2 || !changes[0].Created() {
		t.Fatalf("first plan: %+v, want 2 creations", changes)
	}
	must(t, r.Apply(changes))
	for _, f := range files {
		st, err := os.Stat(filepath.Join(r.Dir(), f.Path))
		must(t, err)
		if st.Mode().Perm() != f.Mode {
			t.Errorf("%s: mode %v, want %v", f.Path, st.Mode().Perm(), f.Mode)
		}
	}
	again, err := r.Plan(files, []string{"/etc/stale"})
	must(t, err)
	if len(again) != 0 {
		t.Fatalf("second plan: %d changes, want none: %+v", len(again), again)
	}

	// One changed file, one changed mode and one stale file to remove.
	must(t, os.WriteFile(filepath.Join(r.Dir(), "etc/stale"), []byte("old"), 0o644))
	files[0].Data = []byte("1b\n")
	files[1].Mode = 0o640
	changes, err = r.Plan(files, []string{"/etc/stale"})
	must(t, err)
	if len(changes) != 3 || !changes[2].Remove {
		t.Fatalf("third plan: %+v, want 2 writes and 1 removal", changes)
	}
	must(t, r.Apply(changes))
	if _, err := os.Stat(filepath.Join(r.Dir(), "etc/stale")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stale file still there: %v", err)
	}
	left, err := filepath.Glob(filepath.Join(r.Dir(), "etc/a/.*eksboot*"))
	must(t, err)
	if len(left) != 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestDiffRedactsSecrets(t *testing.T) {
	c := Change{Path: "/etc/kubernetes/pki/ca.crt", New: []byte("-----BEGIN CERTIFICATE-----\nMIIB\n"), Mode: 0o644, Secret: true}
	d := c.Diff()
	if strings.Contains(d, "MIIB") || !strings.Contains(d, "secret: ") || !strings.Contains(d, "--- /dev/null") {
		t.Errorf("Diff() =\n%s\nwant a redacted creation", d)
	}
	c = Change{Path: "/etc/x", Old: []byte("a\nb\n"), New: []byte("a\nc"), Mode: 0o644}
	d = c.Diff()
	for _, want := range []string{"--- a/etc/x", "+++ b/etc/x", "-b\n", "+c\n\\ No newline at end of file"} {
		if !strings.Contains(d, want) {
			t.Errorf("Diff() =\n%s\nwant it to contain %q", d, want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
