package rootfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// DefaultReadLimit is the most ReadFile reads of one node file (templates, version
// files, caches): far above any real one, far below what would hurt a node.
const DefaultReadLimit = 4 << 20

// ReadFile reads the node file p through DefaultReadLimit (ReadFileLimit). A missing
// file is reported with an error that satisfies errors.Is(err, fs.ErrNotExist).
func (r *Root) ReadFile(p string) ([]byte, error) {
	return r.ReadFileLimit(p, DefaultReadLimit)
}

// ReadFileLimit reads the node file p, which must be a regular file of at most max
// bytes. It never blocks on the open (a named pipe with no writer) and never reads
// more than max+1 bytes (/dev/zero, a file that grows): anything but a regular file,
// and a file larger than max, is an error naming p. A missing file is reported with an
// error that satisfies errors.Is(err, fs.ErrNotExist).
func (r *Root) ReadFileLimit(p string, max int64) ([]byte, error) {
	hp, err := r.Resolve(p)
	if err != nil {
		return nil, err
	}
	return readRegular(hp, p, max)
}

// ReadRegularFile is ReadFileLimit for a host path that is not under a root (the
// file of `render --user-data`).
func ReadRegularFile(name string, max int64) ([]byte, error) {
	return readRegular(name, name, max)
}

// readRegular reads the host file hp, named p in errors, as ReadFileLimit does.
func readRegular(hp, p string, max int64) ([]byte, error) {
	f, err := openRegular(hp, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, unwrapPath(err))
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("read %s: larger than the %d bytes allowed; refusing to read it", p, max)
	}
	return b, nil
}

// openRegular opens the host file hp for reading without blocking and returns it only
// when it is a regular file. The type is checked before the open (so a device is never
// opened) and again on the open file (in case the path was swapped in between).
func openRegular(hp, p string) (*os.File, error) {
	st, err := os.Stat(hp)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, unwrapPath(err))
	}
	if err := regular(st, p); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(hp, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, unwrapPath(err))
	}
	st, err = f.Stat()
	if err == nil {
		err = regular(st, p)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// regular returns an error naming p and its type unless st is a regular file.
func regular(st fs.FileInfo, p string) error {
	m := st.Mode()
	if m.IsRegular() {
		return nil
	}
	kind := fmt.Sprintf("not a regular file (%v)", m.Type())
	switch {
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeCharDevice != 0:
		kind = "a character device"
	case m&fs.ModeDevice != 0:
		kind = "a block device"
	}
	return fmt.Errorf("read %s: %s; refusing to read it (only regular files are read)", p, kind)
}

// unwrapPath drops the host path of an *fs.PathError (the caller names the node path)
// and keeps the cause, so errors.Is(err, fs.ErrNotExist) still holds.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
