// Package phash is the hash behind maxpods' generated instance-type table: a fast
// 64-bit string hash and the two functions that turn a hash into a bucket and, with
// that bucket's seed, into a slot. The generator (maxpods/internal/gen) searches the
// seeds with these functions and maxpods looks names up with the same ones, so the two
// can never disagree.
package phash

import "unsafe"

// Multipliers: odd 64-bit constants with well-mixed bits (the golden ratio and two of
// SplitMix64's).
const (
	k0 = 0x9e3779b97f4a7c15
	k1 = 0xbf58476d1ce4e5b9
	k2 = 0x94d049bb133111eb
)

// Hash returns a 64-bit hash of s. A string of 8 to 24 bytes (every instance-type
// name) costs three overlapping 8-byte loads that together cover every byte, mixed by
// independent multiplications, inlined at the caller; other lengths take a loop. The
// loads read little-endian on every platform, so a table generated on one machine
// works on all. Two strings differ in hash
// unless they collide by chance; the generator checks that no two table names do.
func Hash(s string) uint64 {
	if n := len(s); n >= 8 && n <= 24 {
		// Three loads at 0, n/2-4 and n-8: all within s since n >= 8.
		p := unsafe.Pointer(unsafe.StringData(s))
		h := load(p)*k0 ^ load(unsafe.Add(p, n/2-4))*k1 ^ load(unsafe.Add(p, n-8))*k2 ^ uint64(n)
		return h ^ h>>29
	}
	return hashOther(s)
}

// hashOther hashes strings shorter than 8 or longer than 24 bytes.
func hashOther(s string) uint64 {
	h := uint64(len(s)) * k0
	for len(s) >= 8 {
		h = (h ^ load64(s)) * k1
		h ^= h >> 31
		s = s[8:]
	}
	var x uint64
	for i := 0; i < len(s); i++ {
		x = x<<8 | uint64(s[i])
	}
	h = (h ^ x) * k2
	return h ^ h>>29
}

// load64 reads the first eight bytes of s as a little-endian number (one load on
// amd64 and arm64).
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// Bucket returns the bucket of hash h among 1<<bits buckets (its top bits).
func Bucket(h uint64, bits uint) uint32 {
	return uint32(h >> (64 - bits))
}

// Slot returns the slot of hash h among 1<<bits slots, displaced by its bucket's seed.
func Slot(h uint64, seed uint32, bits uint) uint32 {
	x := (h + uint64(seed)*k0) * k2
	return uint32(x >> (64 - bits))
}
