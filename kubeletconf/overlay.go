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
	if TreeDepth(overlay) > MaxDepth {
		return nil, fmt.Errorf("nested more than %d levels deep", MaxDepth)
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

// ReadOverlay decodes a partial KubeletConfiguration strictly into the upstream
// v1beta1 type (an unknown field or a value of the wrong type is an error naming the
// field) and returns the values of OverlayFields. It is pure.
func ReadOverlay(overlay map[string]any) (OverlayFields, error) {
	var f OverlayFields
	if len(overlay) == 0 {
		return f, nil
	}
	b, err := json.Marshal(overlay)
	if err != nil {
		return f, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var cfg KubeletConfiguration
	if err := dec.Decode(&cfg); err != nil {
		return f, err
	}
	f.MaxPods, f.ClusterDNS = cfg.MaxPods, cfg.ClusterDNS
	if logging, ok := overlay["logging"].(map[string]any); ok {
		_, f.VerbosityGiven = logging["verbosity"]
	}
	return f, nil
}
