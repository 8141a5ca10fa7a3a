package kubeletconf

import (
	"fmt"
	"slices"
	"strings"
)

// The grammar of label keys and values and of taints as the kubelet checks them
// (k8s.io/apimachinery's IsQualifiedName and IsValidLabelValue, the kubelet's
// ValidateKubeletFlags and its taint parser); the same in every kubelet 1.16 and
// later.

// checkQualifiedName checks a label or taint key: an optional DNS subdomain prefix
// and '/', then a name of at most 63 letters, digits, '-', '_' or '.', starting and
// ending with a letter or digit.
func checkQualifiedName(key string) error {
	prefix, name, hasPrefix := strings.Cut(key, "/")
	if !hasPrefix {
		name = prefix
	} else {
		if strings.Contains(name, "/") {
			return fmt.Errorf("has more than one '/'")
		}
		if prefix == "" {
			return fmt.Errorf("has an empty prefix before '/'")
		}
		if !isDNSSubdomain(prefix) {
			return fmt.Errorf("prefix %q is not a lowercase DNS subdomain", prefix)
		}
	}
	switch {
	case name == "":
		return fmt.Errorf("has an empty name")
	case len(name) > 63:
		return fmt.Errorf("name is longer than 63 characters")
	case !isLabelText(name):
		return fmt.Errorf("name must be letters, digits, '-', '_' or '.', starting and ending with a letter or digit")
	}
	return nil
}

// checkLabelValue checks a label (or taint) value: empty, or at most 63 letters,
// digits, '-', '_' or '.', starting and ending with a letter or digit.
func checkLabelValue(v string) error {
	switch {
	case v == "":
		return nil
	case len(v) > 63:
		return fmt.Errorf("is longer than 63 characters")
	case !isLabelText(v):
		return fmt.Errorf("must be letters, digits, '-', '_' or '.', starting and ending with a letter or digit")
	}
	return nil
}

func isLabelText(s string) bool {
	if !isAlnumByte(s[0]) || !isAlnumByte(s[len(s)-1]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnumByte(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// isDNSSubdomain: at most 253 characters, dot-separated labels of lowercase letters,
// digits and '-', each starting and ending with a letter or digit.
func isDNSSubdomain(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || !isLowerAlnum(label[0]) || !isLowerAlnum(label[len(label)-1]) {
			return false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !isLowerAlnum(c) && c != '-' {
				return false
			}
		}
	}
	return true
}

func isAlnumByte(c byte) bool { return isLowerAlnum(c) || 'A' <= c && c <= 'Z' }

func isLowerAlnum(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' }

// kubeletLabels are the labels in the kubernetes.io and k8s.io namespaces that a
// kubelet may set on its own Node (k8s.io/kubelet's well-known labels), and
// kubeletLabelNamespaces the namespaces (and their subdomains) whose labels it may.
var (
	kubeletLabels = []string{
		"beta.kubernetes.io/arch", "beta.kubernetes.io/instance-type", "beta.kubernetes.io/os",
		"failure-domain.beta.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone",
		"kubernetes.io/arch", "kubernetes.io/hostname", "kubernetes.io/os",
		"node.kubernetes.io/instance-type", "topology.kubernetes.io/region", "topology.kubernetes.io/zone",
	}
	kubeletLabelNamespaces = []string{"kubelet.kubernetes.io", "node.kubernetes.io"}
)

// checkNodeLabel checks a --node-labels key as the kubelet does: a label key, and,
// in the kubernetes.io or k8s.io namespaces, one the kubelet may set on itself.
func checkNodeLabel(key string) error {
	if err := checkQualifiedName(key); err != nil {
		return fmt.Errorf("key %q %v", key, err)
	}
	ns, _, ok := strings.Cut(key, "/")
	if !ok || !inNamespace(ns, "kubernetes.io") && !inNamespace(ns, "k8s.io") {
		return nil
	}
	if slices.Contains(kubeletLabels, key) || slices.ContainsFunc(kubeletLabelNamespaces, func(a string) bool { return inNamespace(ns, a) }) {
		return nil
	}
	return fmt.Errorf("key %q is in the kubernetes.io or k8s.io namespace, where a kubelet may set only labels under %s and the well-known ones (%s, ...): set it with kubectl or a controller, or use a namespace of your own",
		key, strings.Join(kubeletLabelNamespaces, "/ and ")+"/", strings.Join(kubeletLabels[5:8], ", "))
}

// inNamespace reports whether label namespace ns is ns0 or a subdomain of it.
func inNamespace(ns, ns0 string) bool { return ns == ns0 || strings.HasSuffix(ns, "."+ns0) }

// parseNodeLabels reads a --node-labels value as the kubelet's flag does: comma-
// separated key=value pairs (a pair without '=' is a key with an empty value), keys
// and values trimmed of spaces; then checks each as ValidateKubeletFlags does.
func parseNodeLabels(value string, into map[string]string) []string {
	var problems []string
	for _, s := range strings.Split(value, ",") {
		if s == "" {
			continue
		}
		k, v, _ := strings.Cut(s, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if err := checkNodeLabel(k); err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if err := checkLabelValue(v); err != nil {
			problems = append(problems, fmt.Sprintf("the value %q of %s %v", v, k, err))
			continue
		}
		into[k] = v
	}
	return problems
}

// checkTaintEffect: NoSchedule, PreferNoSchedule or NoExecute.
func checkTaintEffect(e string) error {
	switch e {
	case "NoSchedule", "PreferNoSchedule", "NoExecute":
		return nil
	}
	return fmt.Errorf("effect %q: want NoSchedule, PreferNoSchedule or NoExecute", e)
}

// parseTaints reads a --register-with-taints value as the kubelet does
// (key[=value]:Effect, comma-separated; "key-" or "key:Effect-" removes a taint,
// which at registration does nothing). An empty value is no taints.
func parseTaints(value string) ([]Taint, []string) {
	if value == "" {
		return nil, nil
	}
	var taints []Taint
	var problems []string
	seen := map[[2]string]bool{}
	for _, spec := range strings.Split(value, ",") {
		remove := strings.HasSuffix(spec, "-")
		t, err := parseTaint(strings.TrimSuffix(spec, "-"))
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("taint %q %v", spec, err))
		case remove:
		case t.Effect == "":
			problems = append(problems, fmt.Sprintf("taint %q has no effect: want key[=value]:NoSchedule, PreferNoSchedule or NoExecute", spec))
		case seen[[2]string{t.Key, t.Effect}]:
			problems = append(problems, fmt.Sprintf("taint %q repeats key %s with effect %s", spec, t.Key, t.Effect))
		default:
			seen[[2]string{t.Key, t.Effect}] = true
			taints = append(taints, t)
		}
	}
	return taints, problems
}

// parseTaint reads one key[=value][:effect].
func parseTaint(s string) (Taint, error) {
	var t Taint
	parts := strings.Split(s, ":")
	switch len(parts) {
	case 1:
		t.Key = parts[0]
	case 2:
		if err := checkTaintEffect(parts[1]); err != nil {
			return t, err
		}
		t.Effect = parts[1]
		kv := strings.Split(parts[0], "=")
		if len(kv) > 2 {
			return t, fmt.Errorf("has more than one '='")
		}
		t.Key = kv[0]
		if len(kv) == 2 {
			if err := checkLabelValue(kv[1]); err != nil {
				return t, fmt.Errorf("value %q %v", kv[1], err)
			}
			t.Value = kv[1]
		}
	default:
		return t, fmt.Errorf("has more than one ':'")
	}
	if err := checkQualifiedName(t.Key); err != nil {
		return t, fmt.Errorf("key %q %v", t.Key, err)
	}
	return t, nil
}
