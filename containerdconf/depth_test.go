package containerdconf

import (
	"fmt"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/inputcheck"
)

// TestContainerdRefusesDeepTOML: a deep overlay or template is an error naming it,
// before it is decoded.
func TestContainerdRefusesDeepTOML(t *testing.T) {
	deep := "version = 2\n" + strings.Repeat("a.", 3000) + "x = 1\n"
	_, err := Containerd(ContainerdInput{Major: 1, SandboxImage: "p", Overlays: []ContainerdOverlay{{Name: "spec.containerd.config", TOML: deep}}})
	if want := "spec.containerd.config: nested more than 64 levels deep (line 2)"; err == nil || err.Error() != want {
		t.Errorf("overlay: %v, want %q", err, want)
	}
	_, err = Containerd(ContainerdInput{Major: 1, SandboxImage: "p", Template: []byte(deep), TemplateName: "/etc/eks/containerd/containerd-config.toml"})
	if want := "containerd config template /etc/eks/containerd/containerd-config.toml: nested more than 64 levels deep (line 2)"; err == nil || err.Error() != want {
		t.Errorf("template: %v, want %q", err, want)
	}
	if err := CheckContainerdOverlay("spec.containerd.config", deep); err == nil || !strings.Contains(err.Error(), "nested more than 64") {
		t.Errorf("CheckContainerdOverlay: %v", err)
	}
}

func TestCheckContainerdOverlayRefusesControlCharacters(t *testing.T) {
	for doc, want := range map[string]string{
		"[plugins.x]\nendpoint = \"https://a\\nb\"\n":            "spec.containerd.config.plugins.x.endpoint: control character U+000A at byte 9 is not allowed",
		"[plugins.x]\n\"k\\u001b[31m\" = 1\n":                    `spec.containerd.config.plugins.x."k\x1b[31m": key: control character U+001B at byte 1 is not allowed`,
		"a = [\"ok\", \"tab\\there\"]\n":                         "spec.containerd.config.a[1]: control character U+0009 at byte 3 is not allowed",
		"[[r]]\nn = \"\\u0085\"\n":                               "spec.containerd.config.r[0].n: control character U+0085 at byte 0 is not allowed",
		"version = 2\n[plugins.\"io.containerd.grpc\"]\nx = 1\n": "",
	} {
		err := CheckContainerdOverlay("spec.containerd.config", doc)
		if fmt.Sprint(err) != want && (want != "" || err != nil) {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
}

// TestBaseRuntimeSpecRefusesDeepOverlays: the base runtime spec checks its own
// depth too, for callers that did not decode a NodeConfig.
func TestBaseRuntimeSpecRefusesDeepOverlays(t *testing.T) {
	deep := map[string]any{}
	m := deep
	for range inputcheck.MaxDepth {
		n := map[string]any{}
		m["a"] = n
		m = n
	}
	if _, err := BaseRuntimeSpec(deep); err == nil || !strings.Contains(err.Error(), "nested more than 64 levels deep") {
		t.Errorf("base runtime spec: %v", err)
	}
}
