package userdata

import (
	"os"
	"path/filepath"
	"testing"
)

// addSamples seeds f with every sample of testdata/userdata.
func addSamples(f *testing.F) {
	files, err := filepath.Glob(filepath.Join(samples, "*.userdata*"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no samples in %s: %v", samples, err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzParse: any bytes give parts or an error, never a panic, within the limits; and
// decoding the NodeConfig parts never panics either.
func FuzzParse(f *testing.F) {
	addSamples(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		parts, err := Parse(b)
		if err != nil {
			return
		}
		total := 0
		for i, p := range parts {
			total += len(p.Body)
			if p.Index != i+1 || p.ContentType == "" {
				t.Fatalf("part %d: index %d, content type %q", i+1, p.Index, p.ContentType)
			}
		}
		if total > len(b)+MaxDecoded {
			t.Fatalf("%d bytes of parts from %d bytes of input", total, len(b))
		}
		if nc, err := DecodeAndMerge(NodeConfigSources(parts)); err == nil && nc != nil {
			_ = Validate(nc)
		}
	})
}

// FuzzFindBootstrapCall: any script gives a call, nothing or an error, never a panic
// or an argument with a CR from a CRLF line end.
func FuzzFindBootstrapCall(f *testing.F) {
	addSamples(f)
	f.Add([]byte("X='a b'\n/etc/eks/bootstrap.sh \"$X\" \\\r\n --k `date` ${Y:-z} $(echo) <<EOF\nx\nEOF\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		parts, err := Parse(b)
		if err != nil {
			parts = script(string(b))
		}
		c, err := FindBootstrapCall(parts)
		if err != nil || c == nil {
			return
		}
		if c.Line < 1 {
			t.Fatalf("line %d", c.Line)
		}
	})
}
