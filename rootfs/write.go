package rootfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
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
	// Chown is set when the file exists with another owner than root:root (OldUID and
	// OldGID), which Apply repairs. Only a Root used as root manages owners.
	Chown          bool
	OldUID, OldGID int
}

// Created reports whether the change creates a file that does not exist yet.
func (c Change) Created() bool { return c.Old == nil && !c.Remove }

// Plan compares the wanted files, and the paths that must not exist, with what is under
// the root, and returns only the changes: files whose bytes, mode or owner (root:root,
// when eksboot runs as root) differ, and unwanted files that exist. It writes nothing.
func (r *Root) Plan(files []File, remove []string) ([]Change, error) {
	var changes []Change
	for _, f := range files {
		cur, err := r.current(f.Path)
		if err != nil {
			return nil, err
		}
		chown := cur.data != nil && r.owns && (cur.uid != 0 || cur.gid != 0)
		if cur.data != nil && bytes.Equal(cur.data, f.Data) && cur.mode == f.Mode.Perm() && !chown {
			continue
		}
		data := f.Data
		if data == nil {
			data = []byte{}
		}
		changes = append(changes, Change{
			Path: f.Path, Old: cur.data, New: data, Mode: f.Mode.Perm(), Secret: f.Secret,
			Chown: chown, OldUID: cur.uid, OldGID: cur.gid,
		})
	}
	for _, p := range remove {
		cur, err := r.current(p)
		if err != nil {
			return nil, err
		}
		if cur.data != nil {
			changes = append(changes, Change{Path: p, Old: cur.data, Remove: true})
		}
	}
	return changes, nil
}

// state is what is under the root at a node path: data is nil when the file is missing.
type state struct {
	data     []byte
	mode     fs.FileMode
	uid, gid int
}

// current returns the content, mode and owner of the node file p (nil content when it
// is missing). It reads as ReadFile does: regular files only, through DefaultReadLimit.
func (r *Root) current(p string) (state, error) {
	hp, err := r.Resolve(p)
	if err != nil {
		return state{}, err
	}
	if _, err := os.Stat(hp); errors.Is(err, fs.ErrNotExist) {
		return state{}, nil
	}
	f, err := openRegular(hp, p)
	if err != nil {
		return state{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return state{}, fmt.Errorf("read %s: %w", p, unwrapPath(err))
	}
	data, err := io.ReadAll(io.LimitReader(f, DefaultReadLimit+1))
	if err != nil {
		return state{}, fmt.Errorf("read %s: %w", p, unwrapPath(err))
	}
	if len(data) > DefaultReadLimit {
		return state{}, fmt.Errorf("read %s: larger than the %d bytes allowed; remove it and run again", p, DefaultReadLimit)
	}
	s := state{data: data, mode: st.Mode().Perm()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		s.uid, s.gid = int(sys.Uid), int(sys.Gid)
	}
	return s, nil
}

// staged is a new file written, synced and closed under its temporary name, waiting
// for its rename.
type staged struct {
	path, host, tmp string
	// made are the directories stage created for it, whose parents Apply syncs.
	made []string
}

// Apply carries out the changes as one node update, in three phases:
//
//  1. Stage: every new file is written to a temporary file next to its target
//     (".<name>.eksboot-<pid>-<random>"), given its mode and owner, and synced, all in
//     parallel. If any of them fails (a full disk, a directory that cannot be made),
//     every temporary file is removed and nothing else has been touched: every file is
//     as it was, and the files to remove are still there.
//  2. Replace: only then are the temporary files renamed over their targets, one after
//     the other in the order of changes, and each directory that changed is synced
//     once, with the parent of each directory phase 1 created (in parallel: the syncs
//     share the file system's journal commits).
//  3. Remove: only when every rename is done and synced are the files to remove
//     unlinked, and their directories synced.
//
// Each file is always whole, old or new. A process killed during phase 1 leaves the
// old node (and temporary files, which the next run removes); killed during phase 2 it
// leaves the first renames done and the rest old (N renames cannot be atomic
// together); killed during phase 3, every file new and some removals not done. A rerun
// completes the node. The errors of all failed changes are joined.
func (r *Root) Apply(changes []Change) error {
	// Phase 1: stage.
	stages := make([]*staged, len(changes))
	errs := make([]error, len(changes))
	var wg sync.WaitGroup
	for i, c := range changes {
		if c.Remove {
			_, errs[i] = r.Resolve(c.Path)
			continue
		}
		wg.Go(func() { stages[i], errs[i] = r.stage(c.Path, c.New, c.Mode) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, s := range stages {
			if s != nil {
				_ = os.Remove(s.tmp)
			}
		}
		return err
	}

	// Phase 2: replace.
	var dirs []string
	var renameErr error
	for i, s := range stages {
		if s == nil {
			continue
		}
		if renameErr != nil {
			_ = os.Remove(s.tmp)
			continue
		}
		if err := os.Rename(s.tmp, s.host); err != nil {
			_ = os.Remove(s.tmp)
			renameErr = fmt.Errorf("write %s: %w (the files before it in this run are new, it and the rest are old; nothing was removed)", changes[i].Path, unwrapLink(err))
			continue
		}
		dirs = append(dirs, filepath.Dir(s.host))
		for _, m := range s.made {
			dirs = append(dirs, filepath.Dir(m))
		}
	}
	if err := errors.Join(renameErr, syncDirs(dirs)); err != nil {
		return err
	}

	// Phase 3: remove.
	dirs = nil
	var rmErrs []error
	for _, c := range changes {
		if !c.Remove {
			continue
		}
		dir, err := r.removeFile(c.Path)
		rmErrs = append(rmErrs, err)
		if dir != "" {
			dirs = append(dirs, dir)
		}
	}
	return errors.Join(append(rmErrs, syncDirs(dirs))...)
}

// WriteFile replaces the node file p with data atomically (Apply with one change): the
// data goes to a temporary file in the same directory, which is synced, given its mode
// (and owner root:root, when run as root) and renamed over p; then the directory is
// synced so the rename survives a crash. Missing parent directories are created with
// mode 0755.
func (r *Root) WriteFile(p string, data []byte, mode fs.FileMode) error {
	return r.Apply([]Change{{Path: p, New: data, Mode: mode}})
}

// stage writes data to a new temporary file next to the node file p, with its mode
// (and owner), synced and closed, and returns it for the rename. On error nothing is
// left behind.
func (r *Root) stage(p string, data []byte, mode fs.FileMode) (*staged, error) {
	hp, err := r.Resolve(p)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(hp)
	made, err := mkdirAll(dir)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", p, unwrapPath(err))
	}
	removeStaleTemps(dir, filepath.Base(hp))
	tmp, err := os.CreateTemp(dir, tempPrefix(filepath.Base(hp))+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", p, unwrapPath(err))
	}
	ok := false
	defer func() {
		if !ok {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return nil, fmt.Errorf("write %s: %w", p, unwrapPath(err))
	}
	if err := tmp.Chmod(mode.Perm()); err != nil {
		return nil, fmt.Errorf("write %s: %w", p, unwrapPath(err))
	}
	if r.owns {
		if err := tmp.Chown(0, 0); err != nil {
			return nil, fmt.Errorf("write %s: chown root:root: %w", p, unwrapPath(err))
		}
	}
	if err := tmp.Sync(); err != nil {
		return nil, fmt.Errorf("write %s: sync: %w", p, unwrapPath(err))
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("write %s: %w", p, unwrapPath(err))
	}
	ok = true
	return &staged{path: p, host: hp, tmp: tmp.Name(), made: made}, nil
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
		return "", fmt.Errorf("remove %s: %w", p, unwrapPath(err))
	}
	return filepath.Dir(hp), nil
}

// MkdirAll creates the node directory p and its parents with mode 0755, and syncs
// the parent of each directory it created, so that a power loss cannot lose them.
func (r *Root) MkdirAll(p string) error {
	hp, err := r.Resolve(p)
	if err != nil {
		return err
	}
	made, err := mkdirAll(hp)
	if err != nil {
		return fmt.Errorf("mkdir %s: %w", p, err)
	}
	parents := make([]string, len(made))
	for i, m := range made {
		parents[i] = filepath.Dir(m)
	}
	if err := syncDirs(parents); err != nil {
		return fmt.Errorf("mkdir %s: %w", p, err)
	}
	return nil
}

// mkdirAll is os.MkdirAll(dir, 0o755) that returns the directories it created,
// outermost first (another writer may create one at the same time: that one is its).
func mkdirAll(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err == nil {
			if !st.IsDir() {
				return nil, &fs.PathError{Op: "mkdir", Path: d, Err: syscall.ENOTDIR}
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || d == filepath.Dir(d) {
			return nil, err
		}
		missing = append(missing, d)
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		err := os.Mkdir(missing[i], 0o755)
		if errors.Is(err, fs.ErrExist) {
			if st, serr := os.Stat(missing[i]); serr == nil && st.IsDir() {
				continue
			}
		}
		if err != nil {
			return made, err
		}
		made = append(made, missing[i])
	}
	return made, nil
}

// tempPrefix is the name prefix of the temporary files that are renamed over base; the
// writer's PID and a random part follow it.
func tempPrefix(base string) string { return "." + base + ".eksboot-" }

// removeStaleTemps removes the temporary files of base in dir that no running writer
// owns: a process killed between creating and renaming its temporary file left them.
// A temporary file names its writer's PID; one whose process is still alive is another
// run's work in progress and is left alone (the run lock keeps two runs apart anyway,
// but a run must never break another's rename). One of this process is stale too (a
// process writes each file once per Apply), and so is one without a PID (an older
// eksboot's). It is best effort: a leftover never changes what the node reads.
func removeStaleTemps(dir, base string) {
	prefix := tempPrefix(base)
	stale, err := filepath.Glob(filepath.Join(dir, globEscape(prefix)+"*"))
	if err != nil {
		return
	}
	for _, p := range stale {
		if writerAlive(strings.TrimPrefix(filepath.Base(p), prefix)) {
			continue
		}
		_ = os.Remove(p)
	}
}

// writerAlive reports whether the temporary file whose name ends in rest
// ("<pid>-<random>") belongs to another process that is still running.
func writerAlive(rest string) bool {
	pidText, _, ok := strings.Cut(rest, "-")
	if !ok {
		return false
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return false
	}
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
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

// syncDirs syncs each of the host directories dirs once, in parallel, so the renames
// and removals in them survive a crash.
func syncDirs(dirs []string) error {
	seen := map[string]bool{}
	var errs []error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, dir := range dirs {
		if seen[dir] {
			continue
		}
		seen[dir] = true
		wg.Go(func() {
			if err := syncDir(dir); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// unwrapLink drops the host paths of an *os.LinkError (the caller names the node path).
func unwrapLink(err error) error {
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
