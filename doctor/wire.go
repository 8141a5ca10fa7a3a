package doctor

import "errors"

// The protobuf wire format (protobuf.dev/programming-guides/encoding), only as
// far as reading one message's fields takes: tags, varints, fixed-size values,
// length-delimited bytes and (skipped) groups. Each consume function returns the
// bytes it read, or -1 when b is not a valid encoding; wire_test.go checks them
// against google.golang.org/protobuf/encoding/protowire.

// errWire is the error of a VersionResponse that is no valid protobuf message.
var errWire = errors.New("not a valid protobuf message")

// Wire types.
const (
	wireVarint     = 0
	wireFixed64    = 1
	wireBytes      = 2
	wireStartGroup = 3
	wireEndGroup   = 4
	wireFixed32    = 5
)

// maxFieldNumber is the largest field number protobuf allows (2^29-1).
const maxFieldNumber = 1<<29 - 1

// maxGroupDepth bounds how deeply skipped groups may nest (protowire's default
// recursion limit).
const maxGroupDepth = 10000

// consumeVarint reads a base-128 varint of at most 10 bytes that fits 64 bits.
func consumeVarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		c := b[i]
		if i == 9 && c > 1 {
			return 0, -1 // beyond 64 bits
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, -1
}

// consumeTag reads a field's tag: its number (1 to maxFieldNumber) and wire type.
func consumeTag(b []byte) (num int32, typ int, n int) {
	v, n := consumeVarint(b)
	if n < 0 || v>>3 < 1 || v>>3 > maxFieldNumber {
		return 0, 0, -1
	}
	return int32(v >> 3), int(v & 7), n
}

// consumeBytes reads a length-delimited value.
func consumeBytes(b []byte) ([]byte, int) {
	l, n := consumeVarint(b)
	if n < 0 || l > uint64(len(b)-n) {
		return nil, -1
	}
	return b[n : n+int(l)], n + int(l)
}

// consumeFieldValue skips the value of field num of wire type typ; a group is
// skipped to its matching end, depth levels deep already.
func consumeFieldValue(num int32, typ int, b []byte, depth int) int {
	switch typ {
	case wireVarint:
		_, n := consumeVarint(b)
		return n
	case wireFixed32:
		if len(b) < 4 {
			return -1
		}
		return 4
	case wireFixed64:
		if len(b) < 8 {
			return -1
		}
		return 8
	case wireBytes:
		_, n := consumeBytes(b)
		return n
	case wireStartGroup:
		if depth >= maxGroupDepth {
			return -1
		}
		total := 0
		for {
			num2, typ2, n := consumeTag(b)
			if n < 0 {
				return -1
			}
			b, total = b[n:], total+n
			if typ2 == wireEndGroup {
				if num2 != num {
					return -1
				}
				return total
			}
			n = consumeFieldValue(num2, typ2, b, depth+1)
			if n < 0 {
				return -1
			}
			b, total = b[n:], total+n
		}
	}
	return -1 // an end group without its start, or a reserved wire type (6, 7)
}
