package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/coreos/go-systemd/v22/unit"
	"go.uber.org/zap"
)

func zapNop() *zap.Logger { return zap.NewNop() }

// splitArgs splits a kubelet command line as systemd splits $VAR: at whitespace,
// removing double quotes.
func splitArgs(s string) []string {
	var out []string
	var cur strings.Builder
	in, have := false, false
	for _, r := range s {
		switch {
		case r == '"':
			in, have = !in, true
		case (r == ' ' || r == '\t') && !in:
			if have {
				out = append(out, cur.String())
			}
			cur.Reset()
			have = false
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	if have {
		out = append(out, cur.String())
	}
	return out
}

// checkNode compares a node's files with a sample's expectations.
func checkNode(t *testing.T, tree map[string][]byte, want expect) {
	t.Helper()
	kubeconfig := string(tree["/var/lib/kubelet/kubeconfig"])
	if !strings.Contains(kubeconfig, fmt.Sprintf("- %q\n", want.ClusterName)) {
		t.Errorf("kubeconfig does not name cluster %q:\n%s", want.ClusterName, kubeconfig)
	}
	if !strings.Contains(kubeconfig, "server: "+want.Endpoint+"\n") {
		t.Errorf("kubeconfig server is not %s", want.Endpoint)
	}
	var kc struct {
		ClusterDNS         []string `json:"clusterDNS"`
		MaxPods            *float64 `json:"maxPods"`
		RegisterWithTaints []struct{ Key, Value, Effect string }
	}
	must(t, json.Unmarshal(tree["/etc/kubernetes/kubelet/kubelet-config.json"], &kc))
	if !reflect.DeepEqual(kc.ClusterDNS, want.DNS) {
		t.Errorf("clusterDNS %q, want %q", kc.ClusterDNS, want.DNS)
	}
	if !reflect.DeepEqual(kc.MaxPods, want.MaxPods) {
		t.Errorf("maxPods %v, want %v", ptrString(kc.MaxPods), ptrString(want.MaxPods))
	}
	var all map[string]any
	must(t, json.Unmarshal(tree["/etc/kubernetes/kubelet/kubelet-config.json"], &all))
	for k, v := range want.KubeletConfig {
		if !reflect.DeepEqual(all[k], v) {
			t.Errorf("kubelet-config.json %s = %v, want %v", k, all[k], v)
		}
	}
	extra := ""
	if b, ok := tree["/etc/systemd/system/kubelet.service.d/30-kubelet-extra-args.conf"]; ok {
		extra = strings.TrimPrefix(unquoteEnv(strings.TrimSpace(strings.TrimPrefix(string(b), "[Service]\nEnvironment="))), "KUBELET_EXTRA_ARGS=")
	}
	if want.KubeletExtraArgs != nil && extra != *want.KubeletExtraArgs {
		t.Errorf("KUBELET_EXTRA_ARGS\n%q, want\n%q", extra, *want.KubeletExtraArgs)
	}
	labels := map[string]string{}
	taints := []string{}
	for _, a := range splitArgs(kubeletFlags(tree)) {
		if v, ok := strings.CutPrefix(a, "--node-labels="); ok {
			for _, kv := range strings.Split(v, ",") {
				k, v, _ := strings.Cut(kv, "=")
				labels[k] = v
			}
		}
		if v, ok := strings.CutPrefix(a, "--register-with-taints="); ok {
			taints = append(taints, strings.Split(v, ",")...)
		}
	}
	for _, tn := range kc.RegisterWithTaints {
		if tn.Value != "" {
			taints = append(taints, tn.Key+"="+tn.Value+":"+tn.Effect)
		} else {
			taints = append(taints, tn.Key+":"+tn.Effect)
		}
	}
	if !reflect.DeepEqual(labels, want.Labels) {
		t.Errorf("labels %v, want %v", labels, want.Labels)
	}
	wantTaints := append([]string{}, want.Taints...)
	sort.Strings(taints)
	sort.Strings(wantTaints)
	if !reflect.DeepEqual(taints, wantTaints) {
		t.Errorf("taints %q, want %q", taints, wantTaints)
	}
}

func ptrString(p *float64) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}

// kubeletFlags is $KUBELET_ARGS $KUBELET_EXTRA_ARGS from the kubelet drop-ins.
func kubeletFlags(tree map[string][]byte) string {
	var flags []string
	for _, p := range []string{"/etc/systemd/system/kubelet.service.d/10-kubelet-args.conf", "/etc/systemd/system/kubelet.service.d/30-kubelet-extra-args.conf"} {
		opts, err := unit.DeserializeOptions(bytes.NewReader(tree[p]))
		if err != nil {
			continue
		}
		for _, o := range opts {
			if o.Name == "Environment" {
				_, v, _ := strings.Cut(unquoteEnv(o.Value), "=")
				flags = append(flags, v)
			}
		}
	}
	return strings.Join(flags, " ")
}

// unquoteEnv undoes kubeletconf.EnvDropIn's quoting of an Environment= assignment:
// 'a=b' as it is, "a=b" with \\, \", \t and %% unescaped.
func unquoteEnv(v string) string {
	if len(v) < 2 || v[0] != v[len(v)-1] || (v[0] != '\'' && v[0] != '"') {
		return v
	}
	q, v := v[0], v[1:len(v)-1]
	if q == '\'' {
		return v
	}
	return strings.NewReplacer(`\\`, `\`, `\"`, `"`, `\t`, "\t", "%%", "%").Replace(v)
}
