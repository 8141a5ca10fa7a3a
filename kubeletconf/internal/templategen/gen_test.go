package main

import (
	"os"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/internal/genfile"
)

const (
	templateFile = "../../../assets/kubelet-config.json"
	goFile       = "../../zz_generated_template.go"
)

// TestGeneratedFileIsFresh regenerates the file in memory and compares it byte for
// byte with the committed one, so `make test` fails when the template changed but the
// file was not regenerated (or was edited by hand).
func TestGeneratedFileIsFresh(t *testing.T) {
	template, err := os.ReadFile(templateFile)
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(template)
	if err != nil {
		t.Fatal(err)
	}
	if err := genfile.WriteOrCheck(goFile, want, true, "the template changed", "make generate"); err != nil {
		t.Fatal(err)
	}
}

func TestGenerateRejectsBadTemplates(t *testing.T) {
	for _, tc := range []struct{ template, wantErr string }{
		{`{"maxPodz": 1}`, `unknown field "maxPodz"`},
		{`{"maxPods": "110"}`, "cannot unmarshal string"},
		{`not json`, "decoding the template"},
		{`{"reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}]}`, "unexported field set"},
	} {
		if _, err := generate([]byte(tc.template)); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("generate(%s): error %v, want one containing %q", tc.template, err, tc.wantErr)
		}
	}
}
