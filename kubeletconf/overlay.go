package kubeletconf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/eksboot/eksboot/inputcheck"
)

// CheckedOverlay is a partial KubeletConfiguration (a NodeConfig's
// spec.kubelet.config) that CheckOverlay accepted: at most inputcheck.MaxDepth levels deep,
// every field the kubelet's own, every value of its field's type. Only
// CheckOverlay makes one (and Merge and Without, from checked ones; the zero value
// is the empty overlay), so what takes one, Overlay, checks nothing again. It is
// never changed once made.
type CheckedOverlay struct {
	m      map[string]any
	fields OverlayFields
}

// CheckOverlay checks a partial KubeletConfiguration, decoded JSON, strictly against
// the upstream v1beta1 type (an unknown field or a value of the wrong type is an
// error naming the field, as encoding/json does) and returns it checked. The
// nodeconfig package calls it where spec.kubelet.config enters, after its own walk
// that names every problem's path. It is pure.
func CheckOverlay(overlay map[string]any) (CheckedOverlay, error) {
	if len(overlay) == 0 {
		return CheckedOverlay{}, nil
	}
	if inputcheck.TreeDepth(overlay) > inputcheck.MaxDepth {
		return CheckedOverlay{}, fmt.Errorf("nested more than %d levels deep", inputcheck.MaxDepth)
	}
	b, err := json.Marshal(overlay)
	if err != nil {
		return CheckedOverlay{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var cfg KubeletConfiguration
	if err := dec.Decode(&cfg); err != nil {
		return CheckedOverlay{}, err
	}
	var m map[string]any // a copy of its own: the caller's map may change
	if err := json.Unmarshal(b, &m); err != nil {
		return CheckedOverlay{}, err
	}
	return CheckedOverlay{m: m, fields: fieldsOf(m)}, nil
}

// fieldsOf reads OverlayFields from a checked overlay, whose values CheckOverlay
// has decoded into their types (a whole int32 maxPods, a list of strings).
func fieldsOf(m map[string]any) OverlayFields {
	var f OverlayFields
	if n, ok := m["maxPods"].(float64); ok {
		f.MaxPods = int32(n)
	}
	if list, ok := m["clusterDNS"].([]any); ok {
		f.ClusterDNS = make([]string, 0, len(list))
		for _, s := range list {
			f.ClusterDNS = append(f.ClusterDNS, s.(string))
		}
	}
	if logging, ok := m["logging"].(map[string]any); ok {
		_, f.VerbosityGiven = logging["verbosity"]
	}
	return f
}

// Fields are the overlay's values that change what eksboot computes besides the merge.
func (o CheckedOverlay) Fields() OverlayFields { return o.fields }

// Len is the number of top-level fields.
func (o CheckedOverlay) Len() int { return len(o.m) }

// Has reports whether the top-level field key is set.
func (o CheckedOverlay) Has(key string) bool { _, ok := o.m[key]; return ok }

// Map returns a deep copy of the overlay as decoded JSON.
func (o CheckedOverlay) Map() map[string]any { return cloneTree(o.m) }

// Without returns the overlay without its top-level field key (still checked).
func (o CheckedOverlay) Without(key string) CheckedOverlay {
	if !o.Has(key) {
		return o
	}
	m := maps.Clone(o.m)
	delete(m, key)
	return CheckedOverlay{m: m, fields: fieldsOf(m)}
}

// Merge lays src over o as nodeadm merges NodeConfigs: objects merge key by key,
// everything else is replaced. Both are checked, so the result is: each of its
// values is one of theirs, under the same field.
func (o CheckedOverlay) Merge(src CheckedOverlay) CheckedOverlay {
	if len(src.m) == 0 {
		return o
	}
	m := deepMerge(cloneTree(o.m), cloneTree(src.m))
	return CheckedOverlay{m: m, fields: fieldsOf(m)}
}

// decode returns the overlay as a whole KubeletConfiguration (the fields it leaves
// out zero).
func (o CheckedOverlay) decode() (*KubeletConfiguration, error) {
	b, err := json.Marshal(o.m)
	if err != nil {
		return nil, err
	}
	var cfg KubeletConfiguration
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// MarshalJSON writes the overlay as its JSON object.
func (o CheckedOverlay) MarshalJSON() ([]byte, error) { return json.Marshal(o.m) }

// cloneTree deep-copies decoded JSON.
func cloneTree(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneTree(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	}
	return v
}

// Overlay merges a checked partial KubeletConfiguration onto cfg as nodeadm does:
// objects merge key by key, everything else is replaced. The overlay was checked
// where it entered (CheckOverlay), so the merge is decoded into the type, not
// checked again. It is pure.
func Overlay(cfg *KubeletConfiguration, overlay CheckedOverlay) (*KubeletConfiguration, error) {
	if overlay.Len() == 0 {
		return cfg, nil
	}
	base, err := Marshal(cfg) // only what is set: the round trip adds no zero values
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(base, &m); err != nil {
		return nil, err
	}
	merged, err := json.Marshal(deepMerge(m, overlay.Map()))
	if err != nil {
		return nil, fmt.Errorf("kubelet config overlay: %w", err)
	}
	var out KubeletConfiguration
	if err := json.Unmarshal(merged, &out); err != nil {
		return nil, fmt.Errorf("kubelet config overlay: %w", err)
	}
	return &out, nil
}

// deepMerge merges src onto dst (both decoded JSON objects).
func deepMerge(dst, src map[string]any) map[string]any {
	if dst == nil {
		dst = map[string]any{}
	}
	for k, sv := range src {
		sm, sok := sv.(map[string]any)
		dm, dok := dst[k].(map[string]any)
		if sok && dok {
			dst[k] = deepMerge(dm, sm)
		} else {
			dst[k] = sv
		}
	}
	return dst
}

// OverlayFields are the values of a partial KubeletConfiguration that change what
// eksboot computes besides the merge itself.
type OverlayFields struct {
	// MaxPods is .maxPods (0: not set).
	MaxPods int32
	// ClusterDNS is .clusterDNS (nil: not set).
	ClusterDNS []string
	// VerbosityGiven: .logging.verbosity is set, so eksboot passes no --v flag
	// (a flag would win over it).
	VerbosityGiven bool
}

// WithFlags returns cfg with the fields the kubelet's flags set laid over it, as the
// kubelet does (kubeletConfigFlagPrecedence): a field a flag sets replaces the file's,
// maps included, except featureGates, which merge key by key (the flag's win).
// flags is CheckArgs' UserArgs.Config, whose values have their fields' types.
func WithFlags(cfg *KubeletConfiguration, flags map[string]any) (*KubeletConfiguration, error) {
	if len(flags) == 0 {
		return cfg, nil
	}
	b, err := Marshal(cfg)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, v := range flags {
		if k == "featureGates" {
			gates, _ := m[k].(map[string]any)
			m[k] = deepMerge(cloneTree(gates), cloneTree(v.(map[string]any)))
			continue
		}
		m[k] = cloneValue(v)
	}
	merged, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out KubeletConfiguration
	if err := json.Unmarshal(merged, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
