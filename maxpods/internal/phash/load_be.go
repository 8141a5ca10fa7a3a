//go:build armbe || arm64be || m68k || mips || mips64 || mips64p32 || ppc || ppc64 || s390 || s390x || shbe || sparc || sparc64

package phash

import (
	"math/bits"
	"unsafe"
)

// load reads the 8 bytes at p as a little-endian number on a big-endian machine.
func load(p unsafe.Pointer) uint64 { return bits.ReverseBytes64(*(*uint64)(p)) }
