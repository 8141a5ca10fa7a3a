package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/eksboot/eksboot/internal/flaghelp"
)

// flagLine is an option line of a help text: its left column.
var flagLine = regexp.MustCompile(`^  (?:-\w, |    )--([a-z0-9-]+)(?: (\S+))?(?:  |$)`)

// TestEveryCommandHelp walks every command of the registry: `eksboot NAME --help`,
// `-h` and `eksboot help NAME` exit 0 with the same help, which starts with the
// usage line, fits in 100 columns, names each value's type (string, duration,
// int; nothing for a switch) and lists every flag of the command.
func TestEveryCommandHelp(t *testing.T) {
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			var outs []string
			for _, args := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {"help", c.name}} {
				var stdout, stderr bytes.Buffer
				if code := Main(append([]string{"eksboot"}, args...), &stdout, &stderr); code != 0 || stderr.Len() > 0 {
					t.Fatalf("eksboot %s: exit %d, stderr %q", strings.Join(args, " "), code, stderr.String())
				}
				outs = append(outs, stdout.String())
			}
			if outs[0] != outs[1] || outs[0] != outs[2] {
				t.Errorf("--help, -h and help %s differ:\n%s\n---\n%s\n---\n%s", c.name, outs[0], outs[1], outs[2])
			}
			out := outs[0]
			if !strings.HasPrefix(out, "Usage: eksboot "+c.name) || !strings.Contains(out, "\nOptions:\n") {
				t.Errorf("help does not start with its usage line or lacks Options:\n%s", out)
			}
			seen := map[string]bool{}
			for _, line := range strings.Split(out, "\n") {
				if n := utf8.RuneCountInString(line); n > flaghelp.Width {
					t.Errorf("line of %d columns: %q", n, line)
				}
				if m := flagLine.FindStringSubmatch(line); m != nil {
					seen[m[1]] = true
					switch m[2] {
					case "", "string", "duration", "int":
					default:
						t.Errorf("--%s: value type %q, want string, duration, int or none", m[1], m[2])
					}
				}
			}
			if strings.Contains(out, "[=true|false]") {
				t.Errorf("help shows [=true|false]:\n%s", out)
			}
			if !seen["help"] {
				t.Errorf("help lacks -h, --help:\n%s", out)
			}
			if c.flags != nil {
				for _, f := range flaghelp.Flags(c.flags("eksboot " + c.name)) {
					if !seen[f.Name] {
						t.Errorf("help lacks --%s", f.Name)
					}
				}
			}
		})
	}
}

// TestTopLevelHelpListsEveryCommand: eksboot --help names each command of the
// registry with its summary, within 100 columns.
func TestTopLevelHelpListsEveryCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"eksboot", "--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, c := range commands() {
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(c.name) + ` +` + regexp.QuoteMeta(c.summary[:20])).MatchString(stdout.String()) {
			t.Errorf("eksboot --help lacks %s: %s", c.name, c.summary)
		}
	}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if len(line) > flaghelp.Width {
			t.Errorf("line of %d columns: %q", len(line), line)
		}
	}
}

// TestBootstrapShHelpIsBootstrapsHelp: bootstrap.sh -h prints what eksboot bootstrap
// --help prints, under its own name.
func TestBootstrapShHelpIsBootstrapsHelp(t *testing.T) {
	var sh, eks, stderr bytes.Buffer
	if Main([]string{"/etc/eks/bootstrap.sh", "--help"}, &sh, &stderr) != 0 || Main([]string{"eksboot", "bootstrap", "--help"}, &eks, &stderr) != 0 {
		t.Fatalf("help failed: %s", stderr.String())
	}
	if got, want := sh.String(), strings.Replace(eks.String(), "eksboot bootstrap", "bootstrap.sh", 1); got != want {
		t.Errorf("bootstrap.sh --help:\n%s\nwant\n%s", got, want)
	}
}

// TestEveryCommandHasFlagSet: help, completion and the man page come from each
// command's FlagSet, so every command must have one.
func TestEveryCommandHasFlagSet(t *testing.T) {
	for _, c := range commands() {
		if c.flags == nil || c.flags("eksboot "+c.name).Lookup("help") == nil {
			t.Errorf("%s: no FlagSet with --help in the command registry", c.name)
		}
	}
}
