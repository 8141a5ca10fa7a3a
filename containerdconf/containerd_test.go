package containerdconf

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/assets"
)

func TestContainerdConfigGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			got := ContainerdConfig(assets.ContainerdConfig, c.pauseImage)
			want := readTestdata(t, filepath.Join(bootstrapDir, c.name, containerdPath))
			if !bytes.Equal(got, want) {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestContainerdConfig(t *testing.T) {
	tests := []struct {
		name, template, image, want string
	}{
		{"every occurrence", "a = \"SANDBOX_IMAGE\"\nb = \"SANDBOX_IMAGE\"\n", "img:1", "a = \"img:1\"\nb = \"img:1\"\n"},
		{"no placeholder", "version = 2\n", "img:1", "version = 2\n"},
		{"sed metacharacters verbatim", `x = "SANDBOX_IMAGE"`, `r/a&b,c\1`, `x = "r/a&b,c\1"`},
		{"empty template", "", "img", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(ContainerdConfig(tc.template, tc.image)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	if strings.Count(assets.ContainerdConfig, assets.SandboxImagePlaceholder) != 1 {
		t.Errorf("the AMI template should hold %s once", assets.SandboxImagePlaceholder)
	}
}
