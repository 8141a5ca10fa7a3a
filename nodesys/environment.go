package nodesys

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/coreos/go-systemd/v22/unit"

	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/unitenv"
)

// Node paths of the spec.instance.environment files, nodeadm's: the default
// environment of every unit the system manager starts, and one Environment= drop-in
// for each of kubelet.service and containerd.service.
const (
	ManagerEnvironmentPath    = "/etc/systemd/system.conf.d/environment.conf"
	KubeletEnvironmentPath    = "/etc/systemd/system/kubelet.service.d/environment.conf"
	ContainerdEnvironmentPath = "/etc/systemd/system/containerd.service.d/environment.conf"
)

// Bounds of spec.instance.environment. execve(2) refuses, with E2BIG, a
// NAME=value string longer than MAX_ARG_STRLEN (32 pages, 131072 bytes with its
// NUL), and arguments and environment together beyond a quarter of the stack limit
// (2 MiB at the usual 8 MiB): the unit would fail at every start. A unit's
// variables get half of that, leaving room for the kubelet's own flags, which
// reach it twice (KUBELET_ARGS and KUBELET_EXTRA_ARGS as variables and as
// arguments). Each line is far below systemd's longest (1 MiB).
const (
	MaxEnvironmentVariable = 128<<10 - 1
	MaxUnitEnvironment     = 1 << 20
)

// EnvironmentFile is the file of one key of spec.instance.environment.
type EnvironmentFile struct {
	// Key is the spec.instance.environment key: "default", "kubelet" or "containerd".
	Key string
	// Path is the node path (ManagerEnvironmentPath, KubeletEnvironmentPath or
	// ContainerdEnvironmentPath).
	Path string
	// Unit is the unit whose environment the file sets: "" for the manager's
	// DefaultEnvironment= (every unit started afterwards), else "kubelet.service" or
	// "containerd.service".
	Unit string
	// Data is the file's contents; nil when the key is absent or its map is empty,
	// which means no file: a stale one is to be removed.
	Data []byte
}

// environmentKeys are the keys of spec.instance.environment, in the order
// InstanceEnvironment returns their files.
var environmentKeys = []struct{ key, path, unit string }{
	{"default", ManagerEnvironmentPath, ""},
	{"kubelet", KubeletEnvironmentPath, "kubelet.service"},
	{"containerd", ContainerdEnvironmentPath, "containerd.service"},
}

// InstanceEnvironment renders spec.instance.environment as nodeadm does:
//
//   - default: /etc/systemd/system.conf.d/environment.conf,
//     [Manager] with one DefaultEnvironment="KEY=value" line per variable;
//   - kubelet, containerd: /etc/systemd/system/<unit>.service.d/environment.conf,
//     [Service] with one Environment="KEY=value" line per variable.
//
// It always returns three files, in that order; a key that is absent or has an
// empty map gets Data nil (no file), not an error. Variables are sorted by name
// (byte order), so the same input gives the same bytes. Every assignment is double
// quoted, as nodeadm writes it, with \ as \\, " as \", a tab as \t, and in the
// service drop-ins % as %% (systemd expands specifiers in Environment=); the
// value reaches the process byte for byte.
//
// Errors, every one found, each naming spec.instance.environment.<key>[.<NAME>]: a
// key other than default, kubelet and containerd; a name that is not a valid
// environment variable name (a letter or '_', then letters, digits or '_'); a value
// that is not UTF-8 or has a newline, NUL or another control character except tab;
// and in default a value with '%'. systemd's handling of % in DefaultEnvironment=
// depends on its version (older managers keep %% as two characters, newer ones
// expand specifiers), so no spelling gives every image the same value; nodeadm
// writes %%, which older systemd passes on as %%.
//
// Sizes, so that the units still start: one variable's NAME=value at most
// MaxEnvironmentVariable bytes, and a unit's variables (default's and its own) at
// most MaxUnitEnvironment in all.
func InstanceEnvironment(env map[string]map[string]string) ([]EnvironmentFile, error) {
	var errs []error
	total := func(key string) int {
		n := 0
		for name, value := range env[key] {
			n += len(name) + 1 + len(value) + 1
		}
		return n
	}
	for _, key := range []string{"kubelet", "containerd"} {
		if n := total("default") + total(key); n > MaxUnitEnvironment {
			errs = append(errs, fmt.Errorf("spec.instance.environment: %s.service would get %d bytes of variables (default and %s), more than the %d allowed", key, n, key, MaxUnitEnvironment))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if !slices.ContainsFunc(environmentKeys, func(e struct{ key, path, unit string }) bool { return e.key == k }) {
			errs = append(errs, fmt.Errorf("spec.instance.environment.%s: unknown key, want default, kubelet or containerd", quote.Name(k)))
		}
	}
	files := make([]EnvironmentFile, 0, len(environmentKeys))
	for _, e := range environmentKeys {
		f := EnvironmentFile{Key: e.key, Path: e.path, Unit: e.unit}
		vars := env[e.key]
		if len(vars) > 0 {
			section, option := "Service", "Environment"
			if e.unit == "" {
				section, option = "Manager", "DefaultEnvironment"
			}
			var opts []*unit.UnitOption
			for _, name := range slices.Sorted(maps.Keys(vars)) {
				field := "spec.instance.environment." + e.key + "." + quote.Name(name)
				value := vars[name]
				if err := unitenv.CheckName(name); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", field, err))
					continue
				}
				if err := unitenv.CheckValue(value); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", field, err))
					continue
				}
				if n := len(name) + 1 + len(value); n > MaxEnvironmentVariable {
					errs = append(errs, fmt.Errorf("%s: %d bytes, more than the %d a variable may have (Linux's MAX_ARG_STRLEN: the unit's process would not start)", field, n, MaxEnvironmentVariable))
					continue
				}
				if e.unit == "" && strings.Contains(value, "%") {
					errs = append(errs, fmt.Errorf("%s: value has '%%', which systemd versions read differently in DefaultEnvironment=; set it in spec.instance.environment.kubelet or .containerd instead", field))
					continue
				}
				opts = append(opts, unit.NewUnitOption(section, option, quoteEnvDouble(name+"="+value, e.unit != "")))
			}
			if len(opts) > 0 {
				data, err := io.ReadAll(unit.Serialize(opts))
				if err != nil {
					errs = append(errs, fmt.Errorf("spec.instance.environment.%s: %w", e.key, err))
				}
				f.Data = data
			}
		}
		files = append(files, f)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return files, nil
}

// quoteEnvDouble double-quotes assignment for Environment= or DefaultEnvironment=
// (both C-unescape a quoted word): \\ for \, \" for ", \t for a tab and, when
// specifiers is set, %% for %. The caller has rejected other control characters.
func quoteEnvDouble(assignment string, specifiers bool) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range assignment {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"':
			b.WriteString(`\"`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '%' && specifiers:
			b.WriteString(`%%`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
