//go:build !(armbe || arm64be || m68k || mips || mips64 || mips64p32 || ppc || ppc64 || s390 || s390x || shbe || sparc || sparc64)

package phash

import "unsafe"

// load reads the 8 bytes at p as a little-endian number (one unaligned load).
func load(p unsafe.Pointer) uint64 { return *(*uint64)(p) }
