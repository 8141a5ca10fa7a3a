// Package rootfs is the only way eksboot touches the node's files. Every path is
// interpreted under a root directory (--root, "/" on a node, a temporary directory in
// tests), symlinks are resolved as if that directory were "/", and nothing is ever read
// or written outside it. Writes are atomic (same-directory temporary file, fsync,
// rename, fsync of the directory) and skipped when the bytes, mode and owner are
// unchanged, so a crash leaves each file either old or new and a rerun with the same
// inputs writes nothing. Apply changes a node as a whole: every file is staged before
// the first rename, and files are removed only after the last. Reads take regular
// files only, without blocking, through a limit. Lock keeps two runs apart.
package rootfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// maxSymlinks bounds symlink resolution, as the kernel's ELOOP does.
const maxSymlinks = 40

// Root is a directory that stands for "/" of the node.
type Root struct {
	dir string
	// owns is set when the process runs as root: then every file written is owned by
	// root:root, and a file with another owner is a change (Plan) that Apply repairs.
	owns bool
}

// New returns the Root for dir, which must be an existing directory.
func New(dir string) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("root %q: %w", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("root %q: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("root %q: not a directory", dir)
	}
	return &Root{dir: abs, owns: os.Geteuid() == 0}, nil
}

// Dir returns the root directory as an absolute host path.
func (r *Root) Dir() string { return r.dir }

// Resolve maps the node path p (absolute, e.g. "/etc/kubernetes/pki/ca.crt") to a
// host path under the root. Symlinks met on the way are followed as if the root were
// "/": an absolute link target is taken relative to the root, ".." in the path never
// climbs above it, and a relative link target that would climb above it is an error. The final component is followed too when it is a symlink. Components that
// do not exist yet are kept as they are.
func (r *Root) Resolve(p string) (string, error) {
	if !path.IsAbs(p) {
		return "", fmt.Errorf("path %q: not absolute", p)
	}
	rest := strings.Split(strings.TrimPrefix(path.Clean(p), "/"), "/")
	resolved := "/" // node path resolved so far, always clean and absolute
	links := 0
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			resolved = path.Dir(resolved)
			continue
		}
		next := joinName(resolved, name)
		st, err := os.Lstat(r.host(next))
		if errors.Is(err, fs.ErrNotExist) {
			resolved = path.Join(append([]string{next}, rest...)...)
			break
		}
		if err != nil {
			return "", fmt.Errorf("path %q: %w", p, err)
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		links++
		if links > maxSymlinks {
			return "", fmt.Errorf("path %q: too many levels of symbolic links", p)
		}
		target, err := os.Readlink(r.host(next))
		if err != nil {
			return "", fmt.Errorf("path %q: %w", p, err)
		}
		if path.IsAbs(target) {
			resolved = "/"
		} else if climbsOut(resolved, target) {
			return "", fmt.Errorf("path %q: symbolic link %s -> %s leads out of the root; refusing to follow it", p, next, target)
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return r.host(path.Clean(resolved)), nil
}

// joinName is path.Join(dir, name) for a clean absolute dir and a name that is
// one component ("", "." and ".." are not): it needs no cleaning, which Resolve
// would otherwise pay for at every component of every path.
func joinName(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// isCleanAbs reports whether p is an absolute path that path.Clean leaves as it
// is: no empty, "." or ".." component, no trailing slash but for "/" itself.
func isCleanAbs(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	start := 1
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		switch p[start:i] {
		case "", ".", "..":
			return p == "/"
		}
		start = i + 1
	}
	return true
}

// climbsOut reports whether the relative link target, taken from directory dir,
// climbs above "/" (which a node would clamp, but which under --root would mean a
// file outside the root: eksboot refuses it rather than guess).
func climbsOut(dir, target string) bool {
	depth := 0
	if dir != "/" {
		depth = strings.Count(dir, "/")
	}
	for _, name := range strings.Split(target, "/") {
		switch name {
		case "", ".":
		case "..":
			depth--
			if depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}

// host joins a clean absolute node path to the root directory.
func (r *Root) host(nodePath string) string {
	if isCleanAbs(nodePath) && nodePath != "/" {
		if r.dir == "/" {
			return nodePath
		}
		return r.dir + nodePath // both clean and absolute: what filepath.Join gives
	}
	return filepath.Join(r.dir, filepath.FromSlash(nodePath))
}

// Stat returns the file info of the node file p, following symlinks inside the root.
func (r *Root) Stat(p string) (fs.FileInfo, error) {
	hp, err := r.Resolve(p)
	if err != nil {
		return nil, err
	}
	return os.Stat(hp)
}

// ReadDir returns the names of the entries of the node directory p, sorted,
// following symlinks inside the root. A missing directory is reported with an
// error that satisfies errors.Is(err, fs.ErrNotExist).
func (r *Root) ReadDir(p string) ([]string, error) {
	hp, err := r.Resolve(p)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(hp)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}
