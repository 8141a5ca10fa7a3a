package userdata

import (
	"bytes"
	"fmt"
	"unicode"
)

// What cloud-init does with each part decides when the kubelet may start. nodeadm,
// and eksboot before it, start the kubelet after cloud-init's last stage
// (cloud-final.service) so that everything of the user's that cloud-init runs has
// run first: a script may edit the node's files or drop a NodeConfig into
// /etc/eks/eksboot.d for the run phase. When cloud-init runs nothing of the user's,
// that wait buys nothing, and the kubelet may start as soon as its files are
// written (EarlyKubelet).
//
// cloud-init types a part by its Content-Type; a part of type text/plain,
// text/x-shellscript or none at all (user data that is not MIME) is typed again by
// its first line, lower-cased, leading space dropped (cloud-init's
// type_from_starts_with); a gzip part is typed again once unpacked (eksboot's
// parser keeps its gzip Content-Type, which forbids the early start anyway). Every
// type cloud-init handles forbids the early start, and so does every type but
// NodeConfig, since a part handler in the image may handle any type.

// cloudInitMarks are the first lines by which cloud-init types a part (its
// INCLUSION_TYPES_MAP, and "#upstart-job" of older releases), longest first where
// one is a prefix of another (cloud-init tries the longest first).
var cloudInitMarks = []struct{ mark, typ string }{
	{"#cloud-config-archive", "text/cloud-config-archive"},
	{"#cloud-config-jsonp", "text/cloud-config-jsonp"},
	{"#cloud-config", TypeCloudConfig},
	{"#cloud-boothook", TypeBoothook},
	{"#include-once", "text/x-include-once-url"},
	{"#include", "text/x-include-url"},
	{"#part-handler", "text/part-handler"},
	{"#upstart-job", "text/upstart-job"},
	{"## template: jinja", "text/jinja2"},
	{"#!", TypeShellScript},
	// Types only MIME gives, which cloud-init also takes as a first line.
	{"text/x-shellscript-per-instance", "text/x-shellscript-per-instance"},
	{"text/x-shellscript-per-boot", "text/x-shellscript-per-boot"},
	{"text/x-shellscript-per-once", "text/x-shellscript-per-once"},
}

// cloudInitWork says what cloud-init does with a part of a type it handles, or ""
// for a type it has no handler for: each of these forbids starting the kubelet
// before cloud-final. (A switch, not a map: no package initialisation.)
func cloudInitWork(typ string) string {
	switch typ {
	case TypeShellScript:
		return "a script that cloud-final runs"
	case "text/x-shellscript-per-boot":
		return "a script that cloud-final runs at every boot"
	case "text/x-shellscript-per-instance":
		return "a script that cloud-final runs once per instance"
	case "text/x-shellscript-per-once":
		return "a script that cloud-final runs once"
	case TypeCloudConfig:
		return "cloud-config, whose modules run in every stage up to cloud-final (bootcmd, write_files, runcmd, packages)"
	case "text/cloud-config-archive":
		return "a cloud-config archive: cloud-config and scripts in another form"
	case "text/cloud-config-jsonp":
		return "a JSON patch of cloud-config"
	case "text/jinja2":
		return "a jinja template that renders to cloud-config or a script"
	case TypeBoothook:
		return "a boothook, which cloud-init's init stage runs at every boot"
	case "text/x-include-url", "text/x-include-once-url":
		return "an include: cloud-init fetches more user data, of any type"
	case "text/part-handler":
		return "a part handler: code that cloud-init runs on the other parts"
	case "text/upstart-job":
		return "an upstart job, which older cloud-init runs"
	case TypePlain:
		return "text/plain, which cloud-init types by its first line and may run"
	}
	return ""
}

// CloudInitMark returns the type cloud-init gives a body by its first line, or ""
// when that line names none.
func CloudInitMark(body []byte) string {
	head := bytes.TrimLeftFunc(body, pySpace)
	head = bytes.ToLower(head[:min(len(head), 40)])
	for _, m := range cloudInitMarks {
		if bytes.HasPrefix(head, []byte(m.mark)) {
			return m.typ
		}
	}
	return ""
}

// pySpace is Python's str.isspace, which cloud-init's lstrip uses: Go's
// unicode.IsSpace and the separators U+001C-U+001F.
func pySpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

// CloudInitActsOn says what cloud-init does with p, or "" when it leaves p alone:
// only a NodeConfig part (application/node.eks.aws, which no cloud-init handler
// takes) whose first line names no type of cloud-init's.
func CloudInitActsOn(p Part) string {
	if p.ContentType == TypeNodeConfig {
		if t := CloudInitMark(p.Body); t != "" {
			return "a NodeConfig whose first line cloud-init reads as " + t
		}
		return ""
	}
	if w := cloudInitWork(p.ContentType); w != "" {
		return w
	}
	return "a type eksboot does not know, which a part handler of the image may run"
}

// EarlyKubelet says whether the kubelet may start before cloud-final, from the
// parts of the user data alone, and why: yes when cloud-init acts on none of them
// (only NodeConfig parts, or no user data), else no, naming the first part it acts
// on.
func EarlyKubelet(parts []Part) (bool, string) {
	var acted []string
	for _, p := range parts {
		if w := CloudInitActsOn(p); w != "" {
			acted = append(acted, p.Name()+" is "+w)
		}
	}
	switch {
	case len(parts) == 0:
		return true, "no user data: cloud-init runs nothing of the user's"
	case len(acted) == 0:
		return true, fmt.Sprintf("the user data has only NodeConfig parts (%d), which cloud-init does not run", len(parts))
	case len(acted) == 1:
		return false, acted[0]
	}
	return false, fmt.Sprintf("%s (and %d more parts that cloud-init runs)", acted[0], len(acted)-1)
}
