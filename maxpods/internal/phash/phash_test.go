package phash

import (
	"testing"
	"unsafe"
)

func TestHashSeesEveryByte(t *testing.T) {
	for _, s := range []string{"", "a", "t3.nano", "m5.large", "c6in.metal-32xl", "u7in-32tb.224xlarge", "0123456789abcdefghijklmnopqrstuvwxyz"} {
		h := Hash(s)
		for i := range len(s) {
			b := []byte(s)
			b[i] ^= 1
			if Hash(string(b)) == h {
				t.Errorf("Hash(%q) does not change when byte %d changes", s, i)
			}
		}
		if Hash(s+"\x00") == h {
			t.Errorf("Hash(%q) does not change with a trailing NUL", s)
		}
	}
}

func TestBucketAndSlotInRange(t *testing.T) {
	for _, s := range []string{"", "m5.large", "x2iedn.metal"} {
		h := Hash(s)
		for bits := uint(1); bits <= 16; bits++ {
			if b := Bucket(h, bits); b >= 1<<bits {
				t.Errorf("Bucket(%#x, %d) = %d, out of range", h, bits, b)
			}
			for seed := uint32(0); seed < 100; seed++ {
				if s := Slot(h, seed, bits); s >= 1<<bits {
					t.Errorf("Slot(%#x, %d, %d) = %d, out of range", h, seed, bits, s)
				}
			}
		}
	}
}

// TestLoadsAreLittleEndian pins the hash to little-endian loads: the fast path and the
// portable byte-by-byte load must agree.
func TestLoadsAreLittleEndian(t *testing.T) {
	s := "0123456789abcdefghij"
	for i := 0; i+8 <= len(s); i++ {
		if got, want := load(unsafe.Pointer(unsafe.StringData(s[i:]))), load64(s[i:]); got != want {
			t.Errorf("load(s[%d:]) = %#x, want %#x", i, got, want)
		}
	}
	if got, want := Hash("m5.large"), uint64(0); got == want {
		t.Error("Hash(m5.large) = 0")
	}
}
