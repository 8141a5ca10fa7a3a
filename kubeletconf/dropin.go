package kubeletconf

import (
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/coreos/go-systemd/v22/unit"

	"github.com/eksboot/eksboot/unitenv"
)

// Environment variables that the kubelet unit expands in its ExecStart=, and the
// drop-ins (in KubeletDropInDir) that set them. These names are spelled here only.
const (
	// KubeletDropInDir is the kubelet unit's drop-in folder.
	KubeletDropInDir = "/etc/systemd/system/kubelet.service.d"
	// KubeletArgsVar holds the flags that bootstrap.sh computes (--node-ip, ...).
	KubeletArgsVar = "KUBELET_ARGS"
	// KubeletArgsDropIn is the drop-in that sets KubeletArgsVar.
	KubeletArgsDropIn = "10-kubelet-args.conf"
	// KubeletExtraArgsVar holds the user's --kubelet-extra-args.
	KubeletExtraArgsVar = "KUBELET_EXTRA_ARGS"
	// KubeletExtraArgsDropIn is the drop-in that sets KubeletExtraArgsVar.
	KubeletExtraArgsDropIn = "30-kubelet-extra-args.conf"
)

// EnvDropIn renders a systemd drop-in that sets one environment variable:
//
//	[Service]
//	Environment=<assignment>
//
// The assignment reaches the process environment as exactly name=value after
// systemd's parsing of Environment= (quote removal, C unescaping, then specifier
// expansion). When value has no ', \, % or control character it is bootstrap.sh's
// form 'name=value', so ordinary values give bootstrap.sh's bytes. Otherwise it is
// "name=value" with \\ for \, \" for ", \t for a tab and %% for %.
//
// It returns an error, naming the variable, if name is not a valid environment
// variable name (a letter or '_', then letters, digits or '_'), or if value is not
// valid UTF-8 or holds a newline, NUL or another control character except tab.
func EnvDropIn(name, value string) ([]byte, error) {
	if err := unitenv.CheckName(name); err != nil {
		return nil, err
	}
	if err := unitenv.CheckValue(value); err != nil {
		return nil, fmt.Errorf("environment variable %s: %w", name, err)
	}
	opts := []*unit.UnitOption{
		unit.NewUnitOption("Service", "Environment", quoteEnvAssignment(name+"="+value)),
	}
	return io.ReadAll(unit.Serialize(opts))
}

// isControl reports whether r is a control character (C0, DEL or C1). Kubelet
// arguments have no use for them, and how systemd treats them in Environment=
// differs between systemd versions, so EnvDropIn refuses them (tab aside).
func isControl(r rune) bool {
	return unicode.IsControl(r)
}

// quoteEnvAssignment quotes assignment for Environment=: single quotes when
// nothing inside needs escaping, double quotes with escapes otherwise.
func quoteEnvAssignment(assignment string) string {
	if !strings.ContainsAny(assignment, `'\%`) && !strings.ContainsFunc(assignment, isControl) {
		return "'" + assignment + "'"
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range assignment {
		switch r {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\t':
			b.WriteString(`\t`)
		case '%':
			b.WriteString(`%%`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
