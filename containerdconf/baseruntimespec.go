package containerdconf

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/eksboot/eksboot/assets"
	"github.com/eksboot/eksboot/inputcheck"
)

// BaseRuntimeSpec returns the base OCI runtime spec of an AL2023 node
// (/etc/containerd/base-runtime-spec.json): assets.BaseRuntimeSpec with overlay,
// NodeConfig's spec.containerd.baseRuntimeSpec, merged onto it as nodeadm merges it:
// objects merge key by key, any other value (a list such as process.rlimits, a
// string, a number, null) replaces the default's. A nil or empty overlay returns the
// default as it is embedded.
//
// The output is JSON with sorted keys, a two-space indent and a final newline, so
// the same input always gives the same bytes. The result must still be a JSON
// object whose ociVersion is a string; containerd checks the rest when it starts.
func BaseRuntimeSpec(overlay map[string]any) ([]byte, error) {
	if len(overlay) == 0 {
		return bytes.Clone(assets.BaseRuntimeSpec), nil
	}
	if inputcheck.TreeDepth(overlay) > inputcheck.MaxDepth {
		return nil, fmt.Errorf("spec.containerd.baseRuntimeSpec: nested more than %d levels deep", inputcheck.MaxDepth)
	}
	var spec map[string]any
	dec := json.NewDecoder(bytes.NewReader(assets.BaseRuntimeSpec))
	dec.UseNumber() // integers such as 1048576 stay integers
	if err := dec.Decode(&spec); err != nil {
		return nil, fmt.Errorf("embedded base runtime spec: %w", err)
	}
	mergeTables(spec, overlay)
	if _, ok := spec["ociVersion"].(string); !ok {
		return nil, fmt.Errorf("spec.containerd.baseRuntimeSpec: ociVersion %v: want a string such as %q", spec["ociVersion"], "1.1.0")
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // a user's "&" stays "&"; Encode ends with the newline
	if err := enc.Encode(spec); err != nil {
		return nil, fmt.Errorf("spec.containerd.baseRuntimeSpec: %w", err)
	}
	return out.Bytes(), nil
}
