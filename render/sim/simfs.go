package sim

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// File is a file of the simulated node: its content and mode.
type File struct {
	Data []byte
	Mode fs.FileMode
}

// memFS is the simulated node's file system: the image's files, then what the user
// data writes. Directories exist when made, when a file is under them, or when the
// image has them (stdDirs). Nothing here touches the host. sim.mu guards it: the
// methods take it, those named ...Locked want it held.
type memFS struct {
	files   map[string]*File
	dirs    map[string]bool
	written []string // paths the user data wrote, in the order first written
	sim     *sim
	hidden  map[string]string // scripts handed to source (hide)
}

// stdDirs are the directories of every EKS node image.
var stdDirs = []string{
	"/", "/bin", "/boot", "/dev", "/etc", "/etc/eks", "/etc/kubernetes", "/etc/sysconfig", "/etc/systemd", "/etc/systemd/system",
	"/home", "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/usr/bin", "/usr/local", "/usr/local/bin", "/usr/sbin",
	"/var", "/var/lib", "/var/lib/cloud", "/var/lib/cloud/scripts", "/var/lib/kubelet", "/var/log", "/var/tmp",
}

func newMemFS(image map[string]File, s *sim) *memFS {
	m := &memFS{files: map[string]*File{}, dirs: map[string]bool{}, sim: s}
	for _, d := range stdDirs {
		m.dirs[d] = true
	}
	m.installLocked(image) // no script runs yet
	return m
}

// install adds files (the Bootstrap hook's).
func (m *memFS) install(files map[string]File) {
	m.sim.mu.Lock()
	defer m.sim.mu.Unlock()
	m.installLocked(files)
}

func (m *memFS) installLocked(files map[string]File) {
	for p, f := range files {
		f := f
		m.files[path.Clean(p)] = &f
		m.mkdirAllLocked(path.Dir(path.Clean(p)))
	}
}

// node is a copy of the files and folders as they are now (the contents are shared:
// a write replaces a file's bytes, an append grows them past the copy's length, so
// what a copy holds never changes).
func (m *memFS) node() Node {
	m.sim.mu.Lock()
	defer m.sim.mu.Unlock()
	return m.nodeLocked()
}

func (m *memFS) nodeLocked() Node {
	n := Node{Files: make(map[string]File, len(m.files)), Dirs: make([]string, 0, len(m.dirs))}
	for p, f := range m.files {
		n.Files[p] = *f
	}
	for d := range m.dirs {
		n.Dirs = append(n.Dirs, d)
	}
	sort.Strings(n.Dirs)
	return n
}

func (m *memFS) mkdirAll(p string) {
	m.sim.mu.Lock()
	defer m.sim.mu.Unlock()
	m.mkdirAllLocked(p)
}

func (m *memFS) mkdirAllLocked(p string) {
	for p != "/" && p != "." && !m.dirs[p] {
		m.dirs[p] = true
		p = path.Dir(p)
	}
}

func (m *memFS) isDir(p string) bool {
	m.sim.mu.Lock()
	defer m.sim.mu.Unlock()
	return m.dirs[path.Clean(p)]
}

// file is a copy of the file at p (its contents shared, see node).
func (m *memFS) file(p string) (File, bool) {
	m.sim.mu.Lock()
	defer m.sim.mu.Unlock()
	if f, ok := m.files[p]; ok {
		return *f, true
	}
	return File{}, false
}

func (m *memFS) isFile(p string) bool {
	_, ok := m.file(p)
	return ok
}

// setMode sets the mode of the file at p to mode(its mode); false when there is no
// such file.
func (m *memFS) setMode(p string, mode func(fs.FileMode) fs.FileMode) bool {
	m.sim.mu.Lock()
	defer m.sim.mu.Unlock()
	f, ok := m.files[p]
	if ok {
		f.Mode = mode(f.Mode)
	}
	return ok
}

// abs is p relative to dir, cleaned.
func abs(dir, p string) string {
	if !path.IsAbs(p) {
		p = path.Join(dir, p)
	}
	return path.Clean(p)
}

func (m *memFS) read(p string) ([]byte, bool) {
	m.sim.mu.Lock()
	defer m.sim.mu.Unlock()
	f, ok := m.files[path.Clean(p)]
	if !ok {
		return nil, false
	}
	return f.Data, true
}

// write replaces (or appends to) p, within the run's output budget.
func (m *memFS) write(p string, b []byte, appendTo bool, mode fs.FileMode) error {
	m.sim.mu.Lock()
	defer m.sim.mu.Unlock()
	return m.writeLocked(p, b, appendTo, mode)
}

func (m *memFS) writeLocked(p string, b []byte, appendTo bool, mode fs.FileMode) error {
	p = path.Clean(p)
	if s := string(b); hasEscaped(s) {
		b = []byte(unescapeBytes(s))
	}
	if err := m.sim.spendLocked(len(b)); err != nil {
		return err
	}
	f, ok := m.files[p]
	if !ok {
		if mode == 0 {
			mode = 0o644
		}
		f = &File{Mode: mode}
		m.files[p] = f
	}
	if !slices.Contains(m.written, p) {
		m.written = append(m.written, p)
	}
	if appendTo {
		f.Data = append(f.Data, b...)
	} else {
		f.Data = append([]byte(nil), b...)
	}
	m.mkdirAllLocked(path.Dir(p))
	return nil
}

func (m *memFS) remove(p string) bool {
	m.sim.mu.Lock()
	defer m.sim.mu.Unlock()
	p = path.Clean(p)
	if _, ok := m.files[p]; ok {
		delete(m.files, p)
		return true
	}
	return false
}

// deferMark starts the file word of a simple command's truncating redirection
// (deferTruncation): private-use characters no script holds (the expansion drops
// a NUL).
const deferMark = "\uF8FE\uF8FFeksboot-render:defer-truncation\uF8FF"

// deferTruncation marks the `>`, `>|` and `&>` files of simple commands, so that
// they are truncated when the command runs rather than when the interpreter opens
// them. Bash expands a simple command's words before it performs its redirections:
// in bootstrap.sh's own `echo "$(jq ... f)" > f`, and in user data that edits
// kubelet-config.json the same way, the command substitution reads f whole, then `>`
// truncates it. The interpreter opens the redirections first, so f was empty when
// jq read it. A compound command's redirections are performed before its body, as
// the interpreter does: those are not marked.
func deferTruncation(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		st, ok := n.(*syntax.Stmt)
		if !ok {
			return true
		}
		if _, simple := st.Cmd.(*syntax.CallExpr); !simple {
			return true
		}
		for _, rd := range st.Redirs {
			switch rd.Op {
			case syntax.RdrOut, syntax.RdrClob, syntax.RdrAll:
				if rd.Word != nil {
					pos := rd.Word.Pos()
					rd.Word.Parts = append([]syntax.WordPart{&syntax.Lit{ValuePos: pos, ValueEnd: pos, Value: deferMark}}, rd.Word.Parts...)
				}
			}
		}
		return true
	})
}

// truncFile is a file opened by a marked redirection: truncated when its command
// runs (sim.call), at its first write, or when closed, whichever comes first.
type truncFile struct {
	m       *memFS
	p       string
	pending bool // guarded by sim.mu (a function's background jobs share the file)
}

func (t *truncFile) truncate() error {
	t.m.sim.mu.Lock()
	defer t.m.sim.mu.Unlock()
	if !t.pending {
		return nil
	}
	t.pending = false
	return t.m.writeLocked(t.p, nil, false, 0)
}

func (t *truncFile) Write(b []byte) (int, error) {
	if err := t.truncate(); err != nil {
		return 0, err
	}
	return fileWriter{t.m, t.p}.Write(b)
}

func (t *truncFile) Read([]byte) (int, error) { return 0, io.EOF }

func (t *truncFile) Close() error { return t.truncate() }

// open is the interpreter's OpenHandler.
func (m *memFS) open(ctx context.Context, p string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
	hc := interp.HandlerCtx(ctx)
	deferred := strings.HasPrefix(p, deferMark)
	p = strings.TrimPrefix(p, deferMark)
	switch p {
	case "/dev/null":
		return nopFile{Reader: strings.NewReader("")}, nil
	case "/dev/stdout":
		return nopFile{Writer: hc.Stdout}, nil
	case "/dev/stderr":
		return nopFile{Writer: hc.Stderr}, nil
	}
	if src, ok := m.hiddenScript(p); ok && flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		return nopFile{Reader: strings.NewReader(src)}, nil
	}
	p = abs(hc.Dir, p)
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		b, ok := m.read(p)
		if !ok {
			return nil, &os.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
		}
		return nopFile{Reader: bytes.NewReader(b)}, nil
	}
	if !m.isDir(path.Dir(p)) {
		return nil, &os.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	appendTo := flag&os.O_APPEND != 0
	truncate := !appendTo && flag&os.O_TRUNC != 0
	// Created now, truncated now unless deferred.
	if err := m.write(p, nil, !truncate || deferred, perm); err != nil {
		return nil, err
	}
	if truncate && deferred {
		return &truncFile{m: m, p: p, pending: true}, nil
	}
	return nopFile{Writer: fileWriter{m, p}}, nil
}

type fileWriter struct {
	m *memFS
	p string
}

func (w fileWriter) Write(b []byte) (int, error) {
	if err := w.m.write(w.p, b, true, 0); err != nil {
		return 0, err
	}
	return len(b), nil
}

type nopFile struct {
	io.Reader
	io.Writer
}

func (f nopFile) Read(b []byte) (int, error) {
	if f.Reader == nil {
		return 0, io.EOF
	}
	return f.Reader.Read(b)
}

func (f nopFile) Write(b []byte) (int, error) {
	if f.Writer == nil {
		return len(b), nil
	}
	return f.Writer.Write(b)
}

func (nopFile) Close() error { return nil }

// stat is the interpreter's StatHandler (test operators, cd).
func (m *memFS) stat(ctx context.Context, p string, _ bool) (fs.FileInfo, error) {
	p = abs(interp.HandlerCtx(ctx).Dir, p)
	if p == "/dev/null" {
		return fileInfo{name: "null", mode: fs.ModeDevice | 0o666}, nil
	}
	m.sim.mu.Lock()
	defer m.sim.mu.Unlock()
	if f, ok := m.files[p]; ok {
		return fileInfo{name: path.Base(p), size: int64(len(f.Data)), mode: f.Mode}, nil
	}
	if m.dirs[p] {
		return fileInfo{name: path.Base(p), mode: fs.ModeDir | 0o755}, nil
	}
	return nil, &os.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
}

// access is the interpreter's AccessHandler: root may read and write anything that
// exists and execute what has an x bit.
func (m *memFS) access(ctx context.Context, p string, mode interp.AccessMode) error {
	fi, err := m.stat(ctx, p, true)
	if err != nil {
		return err
	}
	if mode&interp.AccessExec != 0 && fi.Mode()&0o111 == 0 && !fi.IsDir() {
		return &os.PathError{Op: "access", Path: p, Err: fs.ErrPermission}
	}
	return nil
}

// readDir is the interpreter's ReadDirHandler2 (globbing).
func (m *memFS) readDir(ctx context.Context, p string) ([]fs.DirEntry, error) {
	p = abs(interp.HandlerCtx(ctx).Dir, p)
	m.sim.mu.Lock()
	defer m.sim.mu.Unlock()
	if !m.dirs[p] {
		return nil, &os.PathError{Op: "readdir", Path: p, Err: fs.ErrNotExist}
	}
	seen := map[string]fs.DirEntry{}
	for f, v := range m.files {
		if path.Dir(f) == p {
			seen[path.Base(f)] = fs.FileInfoToDirEntry(fileInfo{name: path.Base(f), size: int64(len(v.Data)), mode: v.Mode})
		}
	}
	for d := range m.dirs {
		if d != p && path.Dir(d) == p {
			seen[path.Base(d)] = fs.FileInfoToDirEntry(fileInfo{name: path.Base(d), mode: fs.ModeDir | 0o755})
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]fs.DirEntry, 0, len(names))
	for _, n := range names {
		out = append(out, seen[n])
	}
	return out, nil
}

type fileInfo struct {
	name string
	size int64
	mode fs.FileMode
}

func (f fileInfo) Name() string       { return f.name }
func (f fileInfo) Size() int64        { return f.size }
func (f fileInfo) Mode() fs.FileMode  { return f.mode }
func (f fileInfo) ModTime() time.Time { return time.Time{} }
func (f fileInfo) IsDir() bool        { return f.mode.IsDir() }
func (f fileInfo) Sys() any           { return nil }
