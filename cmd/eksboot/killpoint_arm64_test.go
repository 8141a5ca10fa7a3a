//go:build linux

package main

import "syscall"

// sysno is the number of the syscall a thread stopped at.
func sysno(r *syscall.PtraceRegs) uint64 { return r.Regs[8] }

// arg is the i-th argument of that syscall.
func arg(r *syscall.PtraceRegs, i int) uint64 { return r.Regs[i] }

// sysRenameat2 is renameat2(2), which package syscall does not name on arm64.
const sysRenameat2 = 276

// killGroups are the file system calls the crash test kills at (arm64 has only the
// *at forms).
var killGroups = []killGroup{
	{"openat", map[uint64]fileArg{syscall.SYS_OPENAT: atPath(0, 1)}},
	{"write", map[uint64]fileArg{syscall.SYS_WRITE: onFD(0), syscall.SYS_PWRITE64: onFD(0)}},
	{"fchmod", map[uint64]fileArg{syscall.SYS_FCHMOD: onFD(0)}},
	{"fchown", map[uint64]fileArg{syscall.SYS_FCHOWN: onFD(0)}},
	{"fsync", map[uint64]fileArg{syscall.SYS_FSYNC: onFD(0), syscall.SYS_FDATASYNC: onFD(0)}},
	{"renameat,renameat2", map[uint64]fileArg{syscall.SYS_RENAMEAT: atPath(0, 1), sysRenameat2: atPath(0, 1)}},
	{"unlinkat", map[uint64]fileArg{syscall.SYS_UNLINKAT: atPath(0, 1)}},
}
