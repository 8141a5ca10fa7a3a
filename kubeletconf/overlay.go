package kubeletconf

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Overlay merges a partial KubeletConfiguration (a NodeConfig's spec.kubelet.config)
// onto cfg as nodeadm does: objects merge key by key, everything else is replaced.
// The result is decoded strictly into the upstream v1beta1 type, so an unknown field
// or a value of the wrong type is an error naming the field. It is pure.
func Overlay(cfg *KubeletConfiguration, overlay map[string]any) (*KubeletConfiguration, error) {
	if len(overlay) == 0 {
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
	merged, err := json.Marshal(deepMerge(m, overlay))
	if err != nil {
		return nil, fmt.Errorf("kubelet config overlay: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(merged))
	dec.DisallowUnknownFields()
	var out KubeletConfiguration
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("kubelet config overlay: %w", err)
	}
	return &out, nil
}

// deepMerge merges src onto dst (both decoded JSON objects).
func deepMerge(dst, src map[string]any) map[string]any {
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
