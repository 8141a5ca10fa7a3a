package doctor

import (
	"path"
	"regexp"
	"strings"

	"github.com/eksboot/eksboot/internal/lazy"
	"github.com/eksboot/eksboot/kubeletconf"
)

// kubeletRefusals are the kubelet's own messages when it refuses what it was given
// at start, each with the part of the message that names the value (a flag, a
// gate, a configuration field or eviction signal) and what kind of value it is.
var kubeletRefusals = [...]struct {
	re   lazy.Regexp
	kind string
}{
	{lazy.Regexp{Expr: `unknown flag: --([A-Za-z0-9_-]+)`}, "flag"},
	{lazy.Regexp{Expr: `unknown shorthand flag: '(.)'`}, "short flag"},
	{lazy.Regexp{Expr: `unrecognized feature gate: ([A-Za-z0-9]+)`}, "feature gate"},
	{lazy.Regexp{Expr: `cannot set feature gate ([A-Za-z0-9]+) to`}, "feature gate"},
	{lazy.Regexp{Expr: `unsupported eviction signal ([A-Za-z.]+)`}, "eviction signal"},
	{lazy.Regexp{Expr: `invalid configuration: ([A-Za-z]+)`}, "configuration field"},
	{lazy.Regexp{Expr: `unknown policy: \\?"([^"\\]*)`}, "policy"},
	{lazy.Regexp{Expr: `unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: \[([^\]]+)\]`}, "node label"},
	{lazy.Regexp{Expr: `failed to validate kubelet flags: ([a-z -]+)`}, "flag value"},
	{lazy.Regexp{Expr: `unknown command (\S+)`}, "word"},
}

// kubeletInputs are the files that carry the kubelet's command line and
// configuration, with the input each is made of.
var kubeletInputs = [...]struct{ path, input string }{
	{kubeletDropIns + "/" + kubeletconf.KubeletExtraArgsDropIn, "the user's kubelet arguments (--kubelet-extra-args or spec.kubelet.flags)"},
	{kubeletDropIns + "/" + kubeletconf.KubeletArgsDropIn, "eksboot's own kubelet arguments (KUBELET_ARGS)"},
	{KubeletConfigPath, "kubelet-config.json (eksboot's values, what the image or the user data before bootstrap.sh set in it, and spec.kubelet.config where the kubelet has no drop-in directory)"},
	{kubeletconf.NodeConfigDropInPath, "spec.kubelet.config, in the kubelet's drop-in directory"},
	{"/etc/systemd/system/kubelet.service", "the kubelet unit"},
}

// kubeletRefusal recognises a line in which the kubelet refused its start, and says
// what it refused and which of the node's files carries that value (by the value's
// name in them), for the kubelet check's fix. ok is false for another line.
func (d *run) kubeletRefusal(line string) (what string, ok bool) {
	for i := range kubeletRefusals {
		r := &kubeletRefusals[i]
		m := r.re.Get().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name := m[1]
		what = "the kubelet refused its " + r.kind + " " + d.quote(name)
		if where := d.carrying(name); where != "" {
			what += ", which " + where
		}
		return what, true
	}
	return "", false
}

// carrying names the files among kubeletInputs whose text holds name (a flag as
// --name or name=, anything else as a whole word), or "".
func (d *run) carrying(name string) string {
	if name == "" {
		return ""
	}
	word := regexp.MustCompile(`(^|[^A-Za-z0-9_.-]|--)` + regexp.QuoteMeta(name) + `($|[^A-Za-z0-9_-])`)
	var found []string
	for _, in := range kubeletInputs {
		b, err := d.env.Files.ReadFileLimit(in.path, maxFileRead)
		if err != nil || !word.Match(b) {
			continue
		}
		found = append(found, in.input+" ("+in.path+")")
	}
	// The image's drop-ins of the kubelet's configuration directory (top level).
	names, _ := d.env.Files.ReadDir(kubeletconf.ConfigDropInDir)
	for _, n := range names {
		p := kubeletconf.ConfigDropInDir + "/" + n
		if p == kubeletconf.NodeConfigDropInPath || path.Ext(n) != kubeletconf.ConfigDropInExt {
			continue
		}
		if b, err := d.env.Files.ReadFileLimit(p, maxFileRead); err == nil && word.Match(b) {
			found = append(found, "a drop-in of the kubelet's configuration directory ("+p+")")
		}
	}
	if len(found) == 0 {
		return ""
	}
	return "comes from " + strings.Join(found, " and ")
}
