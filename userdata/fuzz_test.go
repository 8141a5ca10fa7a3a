package userdata_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/eksboot/eksboot/nodeconfig"
	"github.com/eksboot/eksboot/userdata"
)

const samples = "../testdata/userdata"

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
		parts, err := userdata.Parse(b)
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
		if total > len(b)+userdata.MaxDecoded {
			t.Fatalf("%d bytes of parts from %d bytes of input", total, len(b))
		}
		// The kubelet starts before cloud-final only beside parts cloud-init leaves
		// alone: NodeConfigs whose first line names none of its types.
		if early, _ := userdata.EarlyKubelet(parts); early {
			for _, p := range parts {
				if p.ContentType != userdata.TypeNodeConfig || userdata.CloudInitMark(p.Body) != "" {
					t.Fatalf("early kubelet beside %s, first line %q", p.Name(), p.Body[:min(len(p.Body), 40)])
				}
			}
		}
		if nc, err := nodeconfig.DecodeAndMerge(nodeconfig.Sources(parts)); err == nil && nc != nil {
			_ = nodeconfig.Validate(nc)
		}
	})
}
