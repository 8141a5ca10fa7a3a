package kubeletconf

import (
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/eksboot/eksboot/assets"
)

func TestMergeContainerdConfig(t *testing.T) {
	base := string(ContainerdConfig(assets.ContainerdConfig, "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/pause:3.5"))
	overlay := `
[plugins."io.containerd.grpc.v1.cri".containerd]
discard_unpacked_layers = false

[plugins."io.containerd.grpc.v1.cri".registry.mirrors."docker.io"]
endpoint = ["https://mirror.example.com"]
`
	out, err := MergeContainerdConfig(base, overlay)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := toml.Unmarshal(out, &got); err != nil {
		t.Fatalf("merged config is not TOML: %v\n%s", err, out)
	}
	cri := got["plugins"].(map[string]any)["io.containerd.grpc.v1.cri"].(map[string]any)
	checks := []struct {
		name string
		got  any
		want any
	}{
		{"overlay wins", cri["containerd"].(map[string]any)["discard_unpacked_layers"], false},
		{"sibling key kept", cri["containerd"].(map[string]any)["default_runtime_name"], "runc"},
		{"sandbox image kept", cri["sandbox_image"], "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/pause:3.5"},
		{"registry config_path kept", cri["registry"].(map[string]any)["config_path"], "/etc/containerd/certs.d:/etc/docker/certs.d"},
		{"new table added", cri["registry"].(map[string]any)["mirrors"].(map[string]any)["docker.io"].(map[string]any)["endpoint"].([]any)[0], "https://mirror.example.com"},
		{"runc options kept", cri["containerd"].(map[string]any)["runtimes"].(map[string]any)["runc"].(map[string]any)["options"].(map[string]any)["SystemdCgroup"], true},
		{"top level kept", got["root"], "/var/lib/containerd"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	again, err := MergeContainerdConfig(base, overlay)
	if err != nil || string(again) != string(out) {
		t.Errorf("merge is not deterministic")
	}
	if same, err := MergeContainerdConfig(base, ""); err != nil || string(same) != base {
		t.Errorf("an empty overlay must keep the config byte for byte")
	}
	for _, bad := range []struct{ overlay, want string }{
		{"[plugins\nx = ", "not valid TOML"},
		{"version = 3\n", "version 3 does not match the node's containerd config version 2"},
	} {
		if _, err := MergeContainerdConfig(base, bad.overlay); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("overlay %q: err = %v, want %q", bad.overlay, err, bad.want)
		}
	}
}
