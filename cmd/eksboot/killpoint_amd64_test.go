//go:build linux

package main

import "syscall"

// sysno is the number of the syscall a thread stopped at.
func sysno(r *syscall.PtraceRegs) uint64 { return r.Orig_rax }

// arg is the i-th argument of that syscall.
func arg(r *syscall.PtraceRegs, i int) uint64 {
	return [...]uint64{r.Rdi, r.Rsi, r.Rdx, r.R10, r.R8, r.R9}[i]
}

// sysRenameat2 is renameat2(2), which package syscall does not name on amd64.
const sysRenameat2 = 316

// killGroups are the file system calls the crash test kills at.
var killGroups = []killGroup{
	{"openat", map[uint64]fileArg{syscall.SYS_OPENAT: atPath(0, 1), syscall.SYS_OPEN: plainPath(0)}},
	{"write", map[uint64]fileArg{syscall.SYS_WRITE: onFD(0), syscall.SYS_PWRITE64: onFD(0)}},
	{"fchmod", map[uint64]fileArg{syscall.SYS_FCHMOD: onFD(0)}},
	{"fchown", map[uint64]fileArg{syscall.SYS_FCHOWN: onFD(0)}},
	{"fsync", map[uint64]fileArg{syscall.SYS_FSYNC: onFD(0), syscall.SYS_FDATASYNC: onFD(0)}},
	{"rename,renameat,renameat2", map[uint64]fileArg{syscall.SYS_RENAME: plainPath(0), syscall.SYS_RENAMEAT: atPath(0, 1), sysRenameat2: atPath(0, 1)}},
	{"unlink,unlinkat", map[uint64]fileArg{syscall.SYS_UNLINK: plainPath(0), syscall.SYS_UNLINKAT: atPath(0, 1)}},
}
