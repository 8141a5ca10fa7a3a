package kubelettest

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/coreos/go-systemd/v22/unit"

	"github.com/eksboot/eksboot/unitenv"
	"github.com/eksboot/eksboot/unitenv/unitenvtest"
)

// unitDirs are the folders systemd's system manager loads units from, first one
// first (systemd.unit(5), "Unit File Load Path"), relative to the root.
var unitDirs = []string{"etc/systemd/system", "run/systemd/system", "usr/lib/systemd/system", "lib/systemd/system"}

// Command is how systemd would start a service of a root: its command line and the
// environment its unit sets.
type Command struct {
	// Argv is ExecStart= with its variables expanded; Argv[0] is the program's path.
	Argv []string
	// Env is the unit's Environment= assignments, NAME=VALUE, in the order systemd
	// applies them (a later one of a name replaces an earlier one).
	Env []string
	// Files are the unit file and the drop-ins read, in the order read, relative to
	// the root.
	Files []string
}

// UnitCommand reads the service name (e.g. "kubelet.service") under root as systemd
// would load it (the unit file from the first folder of the load path that has it,
// then every drop-in of name.d/ and service.d/ in those folders, ordered by file
// name, a name in an earlier folder hiding the same name in a later one) and expands
// its ExecStart= as systemd does when it starts the service: each word that is
// exactly $NAME becomes the value of NAME split into words (unitenv.SplitWords:
// systemd's EXTRACT_RELAX|EXTRACT_UNQUOTE), an unset one no word; ${NAME} inside a
// word becomes the value as it is; $$ becomes $. It refuses what eksboot's units
// never use and this model does not know (EnvironmentFile=, an ExecStart= with more
// than one command, prefixes other than "-").
func UnitCommand(root, name string) (Command, error) {
	var c Command
	var files []string
	for _, d := range unitDirs {
		p := filepath.Join(d, name)
		if _, err := os.Stat(filepath.Join(root, p)); err == nil {
			files = append(files, p)
			break
		}
	}
	if len(files) == 0 {
		return c, fmt.Errorf("no %s under %s (%s)", name, root, strings.Join(unitDirs, ", "))
	}
	dropIns := map[string]string{} // file name -> path of the first folder's
	for _, d := range unitDirs {
		for _, sub := range []string{name + ".d", "service.d"} {
			matches, _ := filepath.Glob(filepath.Join(root, d, sub, "*.conf"))
			for _, m := range matches {
				base := filepath.Base(m)
				if _, ok := dropIns[base]; !ok {
					dropIns[base] = filepath.Join(d, sub, base)
				}
			}
		}
	}
	for _, base := range slices.Sorted(maps.Keys(dropIns)) {
		files = append(files, dropIns[base])
	}

	var execStart []string
	var env []string
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return c, err
		}
		opts, err := unit.DeserializeOptions(strings.NewReader(string(b)))
		if err != nil {
			return c, fmt.Errorf("%s: %w", f, err)
		}
		for _, o := range opts {
			if o.Section != "Service" {
				continue
			}
			// A line ending in a backslash goes on in the next, joined by a space.
			value := strings.ReplaceAll(o.Value, "\\\n", " ")
			switch o.Name {
			case "ExecStart":
				if strings.TrimSpace(value) == "" {
					execStart = nil // an empty assignment resets the list
					continue
				}
				execStart = append(execStart, value)
			case "Environment":
				if strings.TrimSpace(value) == "" {
					env = nil
					continue
				}
				words, err := unitenvtest.Parse(value)
				if err != nil {
					return c, fmt.Errorf("%s: Environment=%s: %w", f, value, err)
				}
				for _, w := range words {
					k, _, ok := strings.Cut(w, "=")
					if !ok || unitenv.CheckName(k) != nil {
						return c, fmt.Errorf("%s: Environment= assignment %q is invalid (systemd ignores it)", f, w)
					}
					env = append(env, w)
				}
			case "EnvironmentFile":
				return c, fmt.Errorf("%s: EnvironmentFile= is not modelled", f)
			}
		}
	}
	c.Files, c.Env = files, env
	if len(execStart) != 1 {
		return c, fmt.Errorf("%s: %d ExecStart= commands, want one", name, len(execStart))
	}
	words, err := unitenvtest.Parse(strings.TrimPrefix(execStart[0], "-"))
	if err != nil {
		return c, fmt.Errorf("%s: ExecStart=%s: %w", name, execStart[0], err)
	}
	if len(words) == 0 || !filepath.IsAbs(words[0]) {
		return c, fmt.Errorf("%s: ExecStart=%s: want an absolute path first (prefixes other than - are not modelled)", name, execStart[0])
	}
	c.Argv = expandArgv(words, envMap(env))
	return c, nil
}

// envMap is the environment that assignments give, a later one of a name winning.
func envMap(assignments []string) map[string]string {
	m := map[string]string{}
	for _, a := range assignments {
		k, v, _ := strings.Cut(a, "=")
		m[k] = v
	}
	return m
}

// expandArgv expands the variables of a command line as systemd's replace_env_argv.
func expandArgv(argv []string, env map[string]string) []string {
	var out []string
	for i, w := range argv {
		if i > 0 && len(w) > 1 && w[0] == '$' && w[1] != '{' && w[1] != '$' {
			if v, ok := env[w[1:]]; ok {
				out = append(out, unitenv.SplitWords(v)...)
			}
			continue
		}
		out = append(out, expandWord(w, env))
	}
	return out
}

// expandWord replaces ${NAME} (unset: nothing) and $$ in a word.
func expandWord(w string, env map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		switch {
		case strings.HasPrefix(w[i:], "$$"):
			b.WriteByte('$')
			i++
		case strings.HasPrefix(w[i:], "${"):
			end := strings.IndexByte(w[i:], '}')
			if end < 0 {
				b.WriteString(w[i:])
				return b.String()
			}
			b.WriteString(env[w[i+2:i+end]])
			i += end
		default:
			b.WriteByte(w[i])
		}
	}
	return b.String()
}

// errNoFlag is flagValue's answer for a flag that is not on the command line.
var errNoFlag = errors.New("no such flag")

// flagValue returns the value of the last --name (or -name) of argv, as the
// kubelet's flag set reads "--name value" and "--name=value".
func flagValue(argv []string, name string) (string, error) {
	val, err := "", errNoFlag
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			break
		}
		f, ok := strings.CutPrefix(a, "--")
		if !ok {
			if f, ok = strings.CutPrefix(a, "-"); !ok {
				continue
			}
		}
		if k, v, hasEq := strings.Cut(f, "="); hasEq && k == name {
			val, err = v, nil
		} else if f == name && i+1 < len(argv) {
			val, err = argv[i+1], nil
			i++
		}
	}
	return val, err
}
