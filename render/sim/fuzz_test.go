package sim

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/eksboot/eksboot/userdata"
)

const samples = "../../testdata/userdata"

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

// FuzzFindBootstrapCall: any user data, or any bytes as a script, evaluates to calls,
// nothing or an error, never a panic, within tight bounds (the fuzzer finds endless
// loops quickly); every call names a line, and nothing but the simulated file system
// is written.
func FuzzFindBootstrapCall(f *testing.F) {
	addSamples(f)
	f.Add([]byte("X='a b'\n/etc/eks/bootstrap.sh \"$X\" \\\r\n --k `date` ${Y:-z} $(echo) <<EOF\nx\nEOF\n"))
	f.Add([]byte("#cloud-config\nwrite_files:\n- {path: /a, content: x, encoding: b64}\nruncmd:\n- [/etc/eks/bootstrap.sh, c]\n"))
	f.Add([]byte("while :; do echo $x >> /tmp/f; x=$x$x; done"))
	f.Fuzz(func(t *testing.T, b []byte) {
		parts, err := userdata.Parse(b)
		if err != nil {
			parts = script(string(b))
		}
		ev, err := Evaluate(context.Background(), parts, Options{
			Image:    map[string]File{BootstrapPath: {Data: []byte(testShim), Mode: 0o755}},
			Metadata: testMetadata,
			Limits:   Limits{Steps: 2000, Time: 300 * time.Millisecond, Output: 1 << 16, Depth: 4},
		})
		if err != nil {
			return
		}
		for _, c := range ev.Calls {
			if c.Line < 1 || c.Where == "" {
				t.Fatalf("call %+v", c)
			}
		}
		size := 0
		for _, f := range ev.Files {
			size += len(f.Data)
		}
		if size > 1<<16 {
			t.Fatalf("%d bytes of files past the 64 KiB bound", size)
		}
	})
}
