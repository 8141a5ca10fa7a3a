package kubeletconf

import (
	"bytes"
	"fmt"

	"github.com/pelletier/go-toml/v2"
)

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

// mergeTables merges src into dst: nested tables recursively, any other value
// replaced by src's.
func mergeTables(dst, src map[string]any) {
	for k, sv := range src {
		if st, ok := sv.(map[string]any); ok {
			if dt, ok := dst[k].(map[string]any); ok {
				mergeTables(dt, st)
				continue
			}
		}
		dst[k] = sv
	}
}
