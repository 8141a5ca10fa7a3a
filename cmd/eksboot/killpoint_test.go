//go:build linux && (amd64 || arm64)

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
)

// ptraceExitKill is PTRACE_O_EXITKILL: the tracee dies with its tracer (the test).
const ptraceExitKill = 0x100000

// killGroup is a set of file system calls the crash test kills at: their names as
// strace spells them, and for each syscall number which argument names the file.
type killGroup struct {
	name  string // strace's -e trace= set, e.g. "rename,renameat,renameat2"
	calls map[uint64]fileArg
}

// fileArg says where a syscall names its file: fd, the index of a descriptor
// argument; or path (and dirfd, -1 when there is none), of a path argument.
type fileArg struct {
	fd, path, dirfd int
}

// onFD and atPath build fileArgs.
func onFD(i int) fileArg           { return fileArg{fd: i, path: -1, dirfd: -1} }
func atPath(dirfd, i int) fileArg  { return fileArg{fd: -1, path: i, dirfd: dirfd} }
func plainPath(i int) fileArg      { return fileArg{fd: -1, path: i, dirfd: -1} }
func (g killGroup) String() string { return g.name }

// killRun is one run of the binary under killAt.
type killRun struct {
	// seen counts the calls of the group on files under the root, every thread
	// together, up to the kill.
	seen int
	// killed is set when the run was killed at its n-th call.
	killed bool
	// status is how the binary ended.
	status syscall.WaitStatus
	// output is its stdout and stderr.
	output []byte
}

// killAt runs cmd under ptrace(2) and kills the whole process with SIGKILL on entry
// to its n-th call of the group on a file under root (the root itself included),
// counted across all its threads; n = 0 never kills and counts every call.
//
// strace's own -e inject=...:when=N cannot do this: it counts "per syscall and per
// tracee" (strace(1)), that is per thread, and Go spreads its file system calls over
// several threads (the staging of the files runs in parallel, a blocking call moves
// its goroutine to another thread), so when=N never reached about half the calls.
func killAt(cmd *exec.Cmd, g killGroup, root string, n int) (killRun, error) {
	// Every ptrace request must come from the thread that started the tracee.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	out, err := os.CreateTemp("", "eksboot-killat-*")
	if err != nil {
		return killRun{}, err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out // files, so that os/exec starts no copying goroutine
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return killRun{}, err
	}
	pid := cmd.Process.Pid
	defer func() { _ = cmd.Process.Release() }()
	var r killRun
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, syscall.WALL, nil); err != nil || !ws.Stopped() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		return r, fmt.Errorf("the tracee did not stop at its exec: %v %v", err, ws)
	}
	if err := syscall.PtraceSetOptions(pid, syscall.PTRACE_O_TRACESYSGOOD|syscall.PTRACE_O_TRACECLONE|ptraceExitKill); err != nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		return r, fmt.Errorf("ptrace options: %w", err)
	}
	inCall := map[int]bool{} // thread -> between its syscall-entry and -exit stops
	known := map[int]bool{pid: true}
	var traceErr error
	resume := func(tid, sig int) { _ = syscall.PtraceSyscall(tid, sig) } // ESRCH once killed
	resume(pid, 0)
	for {
		// The tracee's threads share its process group (Setpgid): wait for them only,
		// never for another child of the test.
		tid, err := syscall.Wait4(-pid, &ws, syscall.WALL, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			if errors.Is(err, syscall.ECHILD) {
				break
			}
			return r, err
		}
		if ws.Exited() || ws.Signaled() {
			delete(inCall, tid)
			if tid == pid { // the leader is reported last, once every thread is gone
				r.status = ws
				break
			}
			continue
		}
		if !ws.Stopped() {
			continue
		}
		sig := ws.StopSignal()
		switch {
		case sig == syscall.SIGTRAP|0x80: // a syscall stop
			entering := !inCall[tid]
			inCall[tid] = entering
			if entering && !r.killed {
				var regs syscall.PtraceRegs
				if err := syscall.PtraceGetRegs(tid, &regs); err != nil {
					traceErr = err
				} else if a, ok := g.calls[sysno(&regs)]; ok && underRoot(tid, &regs, a, root) {
					r.seen++
					if r.seen == n {
						// At its entry stop the call has not run; the kernel skips it for a
						// thread with a fatal signal pending.
						_ = syscall.Kill(pid, syscall.SIGKILL)
						r.killed = true
					}
				}
			}
			resume(tid, 0)
		case sig == syscall.SIGTRAP: // the exec, or a new thread (PTRACE_EVENT_CLONE)
			resume(tid, 0)
		case sig == syscall.SIGSTOP && !known[tid]: // a new thread's first stop
			known[tid] = true
			resume(tid, 0)
		default: // the tracee's own signals (Go preempts with SIGURG)
			known[tid] = true
			resume(tid, int(sig))
		}
	}
	if _, err := out.Seek(0, 0); err == nil {
		var b bytes.Buffer
		_, _ = b.ReadFrom(out)
		r.output = b.Bytes()
	}
	return r, traceErr
}

// underRoot reports whether the call names a file under root (or root itself).
func underRoot(tid int, regs *syscall.PtraceRegs, a fileArg, root string) bool {
	var p string
	switch {
	case a.fd >= 0:
		p = fdPath(tid, int(int32(arg(regs, a.fd))))
	case a.path >= 0:
		p = peekString(tid, uintptr(arg(regs, a.path)))
		if !filepath.IsAbs(p) {
			dir := "."
			if a.dirfd >= 0 && int32(arg(regs, a.dirfd)) != atFDCWD {
				dir = fdPath(tid, int(int32(arg(regs, a.dirfd))))
			} else if wd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", tid)); err == nil {
				dir = wd
			}
			p = filepath.Join(dir, p)
		}
	}
	return p == root || len(p) > len(root) && p[:len(root)+1] == root+"/"
}

// atFDCWD is AT_FDCWD.
const atFDCWD = -100

// fdPath is what the tracee's descriptor fd names ("" when nothing).
func fdPath(tid, fd int) string {
	p, err := os.Readlink("/proc/" + strconv.Itoa(tid) + "/fd/" + strconv.Itoa(fd))
	if err != nil {
		return ""
	}
	return p
}

// peekString reads a NUL-terminated string (at most 4 KiB) from the tracee.
func peekString(tid int, addr uintptr) string {
	var b []byte
	buf := make([]byte, 256)
	for len(b) < 4096 {
		n, err := syscall.PtracePeekData(tid, addr+uintptr(len(b)), buf)
		if n > 0 {
			if i := bytes.IndexByte(buf[:n], 0); i >= 0 {
				return string(append(b, buf[:i]...))
			}
			b = append(b, buf[:n]...)
		}
		if err != nil || n == 0 {
			break
		}
	}
	return string(b)
}
