package doctor

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// protowireVersion is parseVersionResponse written with protowire, the reference
// wire.go is checked against.
func protowireVersion(b []byte) (CRIVersion, bool) {
	var v CRIVersion
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return v, false
		}
		b = b[n:]
		if typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return v, false
			}
			b = b[n:]
			continue
		}
		s, n := protowire.ConsumeString(b)
		if n < 0 {
			return v, false
		}
		b = b[n:]
		switch num {
		case 2:
			v.RuntimeName = s
		case 3:
			v.RuntimeVersion = s
		case 4:
			v.RuntimeAPIVersion = s
		}
	}
	return v, true
}

// wireSeeds are encodings of VersionResponses and of what else a message may hold.
func wireSeeds() [][]byte {
	msg := func(fields ...func([]byte) []byte) []byte {
		var b []byte
		for _, f := range fields {
			b = f(b)
		}
		return b
	}
	str := func(num protowire.Number, s string) func([]byte) []byte {
		return func(b []byte) []byte {
			return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), s)
		}
	}
	other := func(b []byte) []byte {
		b = protowire.AppendVarint(protowire.AppendTag(b, 9, protowire.VarintType), 1<<63)
		b = protowire.AppendFixed32(protowire.AppendTag(b, 10, protowire.Fixed32Type), 7)
		b = protowire.AppendFixed64(protowire.AppendTag(b, 11, protowire.Fixed64Type), 7)
		b = protowire.AppendTag(b, 12, protowire.StartGroupType)
		b = protowire.AppendVarint(protowire.AppendTag(b, 1, protowire.VarintType), 3)
		b = protowire.AppendTag(b, 13, protowire.StartGroupType)
		b = protowire.AppendTag(b, 13, protowire.EndGroupType)
		return protowire.AppendTag(b, 12, protowire.EndGroupType)
	}
	return [][]byte{
		msg(str(1, "0.1.0"), str(2, "containerd"), str(3, "v2.1.4"), str(4, "v1")),
		msg(str(2, "containerd"), other, str(3, "v2.1.4")),
		msg(str(4, "v1"), str(2, ""), str(2, " cri-o ")),
		{},
		{0},
		{8},
		{0x12, 0x05, 'a'},
		{0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		{0x63},
		{0x64},
		{0x66},
		{0x67},
		{0xf8, 0xff, 0xff, 0xff, 0x0f, 0},
		{0x80, 0x80, 0x80, 0x80, 0x10},
	}
}

func TestParseVersionResponseAgreesWithProtowire(t *testing.T) {
	for _, b := range wireSeeds() {
		compareWire(t, b)
	}
}

// FuzzParseVersionResponse: on any bytes, parseVersionResponse fails where
// protowire fails, and reads the same fields where it does not.
func FuzzParseVersionResponse(f *testing.F) {
	for _, b := range wireSeeds() {
		f.Add(b)
	}
	f.Fuzz(compareWire)
}

func compareWire(t *testing.T, b []byte) {
	want, ok := protowireVersion(b)
	got, err := parseVersionResponse(b)
	switch {
	case !ok:
		if err == nil {
			t.Fatalf("%x: protowire refuses it, parseVersionResponse = %+v", b, got)
		}
	case want.RuntimeName == "":
		if err == nil {
			t.Fatalf("%x: no runtime name, parseVersionResponse = %+v", b, got)
		}
	default:
		if err != nil {
			t.Fatalf("%x: protowire reads %+v, parseVersionResponse fails: %v", b, want, err)
		}
		want.RuntimeName = strings.TrimSpace(want.RuntimeName) // as parseVersionResponse does
		if got != want {
			t.Fatalf("%x: got %+v, protowire %+v", b, got, want)
		}
	}
}
