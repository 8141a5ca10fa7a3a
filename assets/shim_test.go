package assets

import (
	"bytes"
	"compress/gzip"
	"flag"
	"os"
	"testing"
)

var updateShim = flag.Bool("update", false, "rewrite bootstrap.sh.gz from bootstrap.sh")

// TestShimGz: the embedded, gzipped shim is bootstrap.sh byte for byte, and its
// compressed form does not hold the text eksctl's sed hook looks for.
func TestShimGz(t *testing.T) {
	text, err := os.ReadFile("bootstrap.sh")
	if err != nil {
		t.Fatal(err)
	}
	if *updateShim {
		if err := os.WriteFile("bootstrap.sh.gz", gzipShim(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(BootstrapShim(), text) {
		t.Fatal("bootstrap.sh.gz is stale: run go test ./assets -run TestShimGz -update and commit it")
	}
	if bytes.Contains(bootstrapShimGz, []byte("KUBELET_EXTRA_ARGS")) {
		t.Error("bootstrap.sh.gz holds KUBELET_EXTRA_ARGS in clear")
	}
}

// gzipShim compresses the shim as bootstrap.sh.gz holds it (no name, no time, so
// the bytes depend on the text only).
func gzipShim(text []byte) []byte {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = w.Write(text)
	_ = w.Close()
	return buf.Bytes()
}
