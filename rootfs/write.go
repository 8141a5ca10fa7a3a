package rootfs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// File is a file that eksboot owns on the node: its node path, its full content and its
// permission bits.
type File struct {
	Path string
	Data []byte
	Mode fs.FileMode
	// Secret marks content that must never be printed (diffs show a digest instead).
	Secret bool
}

// Change is what applying one File (or removing one) would do.
type Change struct {
	// Path is the node path.
	Path string
	// Old is the current content; nil when the file does not exist.
	Old []byte
	// New is the wanted content; nil when the file is to be removed.
	New []byte
	// Mode is the wanted permission bits.
	Mode fs.FileMode
	// Remove is set when the file is to be deleted.
	Remove bool
	// Secret marks content that must never be printed.
	Secret bool
}

// Created reports whether the change creates a file that does not exist yet.
func (c Change) Created() bool { return c.Old == nil && !c.Remove }

// Plan compares the wanted files, and the paths that must not exist, with what is under
// the root, and returns only the changes: files whose bytes or mode differ, and
// unwanted files that exist. It writes nothing.
func (r *Root) Plan(files []File, remove []string) ([]Change, error) {
	var changes []Change
	for _, f := range files {
		old, mode, err := r.current(f.Path)
		if err != nil {
			return nil, err
		}
		if old != nil && bytes.Equal(old, f.Data) && mode == f.Mode.Perm() {
			continue
		}
		data := f.Data
		if data == nil {
			data = []byte{}
		}
		changes = append(changes, Change{Path: f.Path, Old: old, New: data, Mode: f.Mode.Perm(), Secret: f.Secret})
	}
	for _, p := range remove {
		old, _, err := r.current(p)
		if err != nil {
			return nil, err
		}
		if old != nil {
			changes = append(changes, Change{Path: p, Old: old, Remove: true})
		}
	}
	return changes, nil
}

// current returns the content and mode of the node file p, or nil when it is missing.
func (r *Root) current(p string) ([]byte, fs.FileMode, error) {
	hp, err := r.Resolve(p)
	if err != nil {
		return nil, 0, err
	}
	st, err := os.Stat(hp)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", p, err)
	}
	if !st.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s: not a regular file", p)
	}
	data, err := os.ReadFile(hp)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", p, err)
	}
	return data, st.Mode().Perm(), nil
}

// Apply carries out the changes, each one atomically, all at once: every file is
// written to its temporary file, synced and renamed in parallel, then each directory
// that changed is synced once, again in parallel, so the renames survive a crash.
// (Parallel syncs share the file system's journal commits instead of waiting for one
// each.) An error leaves every file either as it was or entirely new; the errors of
// all failed changes are joined.
func (r *Root) Apply(changes []Change) error {
	dirs := make([]string, len(changes))
	errs := make([]error, len(changes))
	var wg sync.WaitGroup
	for i, c := range changes {
		wg.Go(func() {
			if c.Remove {
				dirs[i], errs[i] = r.removeFile(c.Path)
			} else {
				dirs[i], errs[i] = r.replace(c.Path, c.New, c.Mode)
			}
		})
	}
	wg.Wait()
	dirErrs := make([]error, len(changes))
	synced := map[string]bool{}
	for i, dir := range dirs {
		if dir == "" || synced[dir] {
			continue
		}
		synced[dir] = true
		wg.Go(func() { dirErrs[i] = syncDir(dir, changes[i].Path) })
	}
	wg.Wait()
	return errors.Join(append(errs, dirErrs...)...)
}

// WriteFile replaces the node file p with data atomically: the data goes to a
// temporary file in the same directory, which is synced, given its mode and renamed over
// p; then the directory is synced so the rename survives a crash. Missing parent
// directories are created with mode 0755.
func (r *Root) WriteFile(p string, data []byte, mode fs.FileMode) error {
	dir, err := r.replace(p, data, mode)
	if err != nil {
		return err
	}
	return syncDir(dir, p)
}

// replace is WriteFile without the sync of the directory, which it returns (as a host
// path) for the caller to sync.
func (r *Root) replace(p string, data []byte, mode fs.FileMode) (string, error) {
	hp, err := r.Resolve(p)
	if err != nil {
		return "", err
	}
	dir := filepath.Dir(hp)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("write %s: %w", p, err)
	}
	removeStaleTemps(dir, filepath.Base(hp))
	tmp, err := os.CreateTemp(dir, tempPrefix(filepath.Base(hp))+"*")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", p, err)
	}
	committed := false
	defer func() {
		if !committed {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return "", fmt.Errorf("write %s: %w", p, err)
	}
	if err := tmp.Chmod(mode.Perm()); err != nil {
		return "", fmt.Errorf("write %s: %w", p, err)
	}
	if err := tmp.Sync(); err != nil {
		return "", fmt.Errorf("write %s: sync: %w", p, err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("write %s: %w", p, err)
	}
	if err := os.Rename(tmp.Name(), hp); err != nil {
		return "", fmt.Errorf("write %s: %w", p, err)
	}
	committed = true
	return dir, nil
}

// removeFile deletes the node file p and returns its directory for the caller to
// sync (nothing to sync when the file was already gone).
func (r *Root) removeFile(p string) (string, error) {
	hp, err := r.Resolve(p)
	if err != nil {
		return "", err
	}
	err = os.Remove(hp)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("remove %s: %w", p, err)
	}
	return filepath.Dir(hp), nil
}

// MkdirAll creates the node directory p and its parents with mode 0755.
func (r *Root) MkdirAll(p string) error {
	hp, err := r.Resolve(p)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(hp, 0o755); err != nil {
		return fmt.Errorf("mkdir %s: %w", p, err)
	}
	return nil
}

// tempPrefix is the name prefix of the temporary files that WriteFile renames over base.
func tempPrefix(base string) string { return "." + base + ".eksboot-" }

// removeStaleTemps removes temporary files that an earlier, interrupted WriteFile of
// base left in dir (a process killed between creating and renaming its temporary file).
// It is best effort: a leftover never changes what the node reads.
func removeStaleTemps(dir, base string) {
	stale, err := filepath.Glob(filepath.Join(dir, globEscape(tempPrefix(base))+"*"))
	if err != nil {
		return
	}
	for _, p := range stale {
		_ = os.Remove(p)
	}
}

// globEscape escapes the glob metacharacters of s.
func globEscape(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', '\\':
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return string(b)
}

func syncDir(dir, p string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("write %s: sync directory: %w", p, err)
	}
	return nil
}
