package kubeletconf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/eksboot/eksboot/assets"
	"github.com/eksboot/eksboot/inputcheck"
	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/internal/yamljson"
)

// The kubelet's drop-in configuration directory (--config-dir, nodeadm's), and the
// drop-in a NodeConfig's spec.kubelet.config goes to on a kubelet that reads it
// (KubeletRow.ConfigDir): nodeadm's file name, so that an image's drop-ins sort
// before or after the user's settings as they did under nodeadm.
const (
	ConfigDropInDir      = "/etc/kubernetes/kubelet/config.json.d"
	NodeConfigDropIn     = "40-nodeadm.conf"
	NodeConfigDropInPath = ConfigDropInDir + "/" + NodeConfigDropIn
	// ConfigDropInExt is the only suffix the kubelet reads in ConfigDropInDir;
	// it skips every other file.
	ConfigDropInExt = ".conf"
)

// The type of every kubelet configuration file: the kubelet refuses a file, the
// --config file or a drop-in, that names another (or none).
const (
	ConfigAPIVersion = "kubelet.config.k8s.io/v1beta1"
	ConfigKind       = "KubeletConfiguration"
)

// CheckConfigFile checks a kubelet configuration file eksboot reads but did not
// make (the image's kubelet-config.json, as the image and the user data before
// bootstrap.sh left it; a drop-in of ConfigDropInDir): JSON or YAML, as the kubelet
// reads either, an object at most inputcheck.MaxDepth deep with no control
// character in a key or string, of ConfigAPIVersion and ConfigKind, and every field
// and value the v1beta1 type's (CheckOverlay). It returns the file's fields
// checked. It is pure.
func CheckConfigFile(b []byte) (CheckedOverlay, error) {
	doc := b
	if !json.Valid(b) {
		// YAML's parser bounds its own nesting (10,000 levels), and the JSON it
		// gives is compact: its depth is checked next, before it is decoded.
		j, err := yamljson.ToJSON(b)
		if err != nil {
			return CheckedOverlay{}, fmt.Errorf("not JSON or YAML: %w", err)
		}
		doc = j
	}
	if err := inputcheck.CheckJSONDepth(doc); err != nil {
		return CheckedOverlay{}, err
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return CheckedOverlay{}, fmt.Errorf("not JSON or YAML: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return CheckedOverlay{}, fmt.Errorf("want an object (apiVersion: %s, kind: %s)", ConfigAPIVersion, ConfigKind)
	}
	var problems []string
	if s, _ := m["apiVersion"].(string); s != ConfigAPIVersion {
		problems = append(problems, fmt.Sprintf("apiVersion: %s, want %s (the kubelet refuses the file)", quoteOrMissing(m["apiVersion"]), ConfigAPIVersion))
	}
	if s, _ := m["kind"].(string); s != ConfigKind {
		problems = append(problems, fmt.Sprintf("kind: %s, want %s (the kubelet refuses the file)", quoteOrMissing(m["kind"]), ConfigKind))
	}
	problems = append(problems, inputcheck.CheckTreeText(m, "")...)
	if len(problems) > 0 {
		for i, p := range problems {
			problems[i] = strings.TrimPrefix(p, ".")
		}
		return CheckedOverlay{}, errors.New(quote.List(problems))
	}
	return CheckOverlay(m)
}

func quoteOrMissing(v any) string {
	if v == nil {
		return "missing"
	}
	return quote.Value(fmt.Sprint(v))
}

// NodeConfigDropInFile renders NodeConfigDropInPath: o, a NodeConfig's
// spec.kubelet.config, with the type the kubelet requires of a drop-in (nodeadm
// adds it too). nil when o is empty: no drop-in.
func NodeConfigDropInFile(o CheckedOverlay) ([]byte, error) {
	if o.Len() == 0 {
		return nil, nil
	}
	m := o.Map()
	m["apiVersion"], m["kind"] = ConfigAPIVersion, ConfigKind
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DropIn is one drop-in of the kubelet's configuration directory: its node path and
// its checked fields.
type DropIn struct {
	Path   string
	Config CheckedOverlay
}

// Effective is the configuration the kubelet runs with from its --config file cfg
// and the drop-ins of its --config-dir, given in the kubelet's order (the sorted
// walk of the directory): each merged over the result of the ones before as a JSON
// merge patch (RFC 7386: objects merge key by key, null removes a key, anything
// else replaces), as the kubelet merges them. Command-line flags, which win over
// both, are not applied; nor are the kubelet's defaults (it merges the drop-ins
// over the file with its defaults, which differs only for a map the file leaves
// unset and a drop-in sets in part). It is pure.
func Effective(cfg *KubeletConfiguration, dropIns []DropIn) (*KubeletConfiguration, error) {
	if len(dropIns) == 0 {
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
	for _, d := range dropIns {
		m = mergePatch(m, d.Config.Map())
	}
	merged, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out KubeletConfiguration
	if err := json.Unmarshal(merged, &out); err != nil {
		return nil, fmt.Errorf("the drop-ins merged: %w", err)
	}
	return &out, nil
}

// mergePatch applies patch to target as RFC 7386 says.
func mergePatch(target, patch map[string]any) map[string]any {
	if target == nil {
		target = map[string]any{}
	}
	for k, pv := range patch {
		if pv == nil {
			delete(target, k)
			continue
		}
		pm, pok := pv.(map[string]any)
		if !pok {
			target[k] = pv
			continue
		}
		tm, _ := target[k].(map[string]any)
		target[k] = mergePatch(tm, pm)
	}
	return target
}

// SortDropIns puts drop-ins in the order the kubelet reads them: it walks its
// directory with filepath.WalkDir, each folder's entries by name, into a folder
// where its name sorts; so the order is that of the paths compared folder by
// folder.
func SortDropIns(d []DropIn) {
	slices.SortStableFunc(d, func(a, b DropIn) int {
		return slices.Compare(strings.Split(a.Path, "/"), strings.Split(b.Path, "/"))
	})
}

// IsTemplate reports whether o, a checked configuration file, is the AMI's
// kubelet-config.json template (assets.KubeletConfig) field for field: a node whose
// file is still the template has no settings of its own in it.
func IsTemplate(o CheckedOverlay) bool {
	t, err := CheckConfigFile(assets.KubeletConfig)
	return err == nil && reflect.DeepEqual(o.m, t.m)
}
