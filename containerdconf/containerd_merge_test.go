package containerdconf

import (
	"bytes"
	"fmt"
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

// MergeContainerdConfig deep-merges overlay, a partial containerd configuration in
// TOML (NodeConfig's spec.containerd.config), onto base, the rendered config.toml:
// tables merge key by key and the overlay's values win, as nodeadm does. containerd's
// own `imports` cannot do this: in containerd 1.x an imported file replaces a plugin's
// whole table, so a one-line overlay would drop the sandbox image and the runc options.
// An empty overlay returns base unchanged. Errors about the overlay do not name it:
// the caller knows where it came from.
func MergeContainerdConfig(base, overlay string) ([]byte, error) {
	if overlay == "" {
		return []byte(base), nil
	}
	var b, o map[string]any
	if err := toml.Unmarshal([]byte(base), &b); err != nil {
		return nil, fmt.Errorf("containerd config template: %w", err)
	}
	if err := toml.Unmarshal([]byte(overlay), &o); err != nil {
		return nil, fmt.Errorf("not valid TOML: %w", err)
	}
	if v, ok := o["version"]; ok && fmt.Sprint(v) != fmt.Sprint(b["version"]) {
		return nil, fmt.Errorf("version %v does not match the node's containerd config version %v", v, b["version"])
	}
	mergeTables(b, o)
	var out bytes.Buffer
	enc := toml.NewEncoder(&out)
	enc.SetIndentTables(false)
	if err := enc.Encode(b); err != nil {
		return nil, fmt.Errorf("encode the merged containerd config: %w", err)
	}
	return out.Bytes(), nil
}
