package cli

import (
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/cli/flags"
	"github.com/eksboot/eksboot/internal/flaghelp"
)

// command is one of eksboot's commands: what its help, shell completion and the man
// page say of it, and how it runs. Help, completion and eksboot(8) are all made from
// these entries and from each command's own FlagSet, so a flag is defined once.
type command struct {
	name     string
	synopsis string // the usage line after "eksboot NAME"
	summary  string // one line: the command list, completion, the man page
	about    string // the help's paragraph under the usage line
	// flags returns the FlagSet that run parses (fresh, bound to throw-away
	// values). Every command has one (TestEveryCommandHasFlagSet).
	flags func(prog string) *pflag.FlagSet
	run   func(prog string, args []string, stdout, stderr io.Writer) int
	// words are what completion offers for the positional arguments.
	words func() []string
}

// commands lists eksboot's commands in the order help shows them. A command added
// to Main's switch instead of here works but is missing from help, completion and
// the man page: add it here.
func commands() []command {
	return []command{
		{
			name: "bootstrap", synopsis: flags.UsageSynopsis, about: flags.UsageSummary,
			summary: "configure and start the kubelet from bootstrap.sh's command line",
			flags: func(prog string) *pflag.FlagSet {
				var o bootstrap.Options
				return flags.Bootstrap(prog, &o)
			},
			run: runBootstrap,
		},
		{
			name: "init", synopsis: "[options]",
			summary: "configure the node from the NodeConfig parts of its user data",
			about:   "Configures this node from the NodeConfig parts of its user data, then nodeadm's drop-ins (/etc/eks/nodeadm.d/*.yaml, *.yml, *.json), then /etc/eks/eksboot.d/*.yaml.",
			flags: func(prog string) *pflag.FlagSet {
				var o bootstrap.Options
				var phase, kubeletStart string
				return initFlags(prog, &o, &phase, &kubeletStart)
			},
			run: runInit,
		},
		{
			name: "render", synopsis: "--user-data FILE --instance-type TYPE [options]",
			summary: "print what a node launched with that user data would get (offline)",
			about:   renderAbout,
			flags: func(prog string) *pflag.FlagSet {
				var o RenderFlags
				return o.FlagSet(prog)
			},
			run: func(prog string, args []string, stdout, stderr io.Writer) int {
				return renderRunner(prog, args, stdout, stderr)
			},
		},
		{
			name: "max-pods", synopsis: "[options]",
			summary: "print the kubelet max pods of an instance type (max-pods-calculator.sh's options)",
			about:   "Prints the kubelet max pods for an instance type, as max-pods-calculator.sh does.",
			flags: func(prog string) *pflag.FlagSet {
				var f maxPodsFlags
				return f.flagSet(prog)
			},
			run: runMaxPods,
		},
		{
			name: "doctor", synopsis: "[options]",
			summary: "check why the node may be NotReady, with the evidence and a fix for each check",
			about: "Checks why the node may be NotReady: IMDS, what eksboot wrote, the API server, the node's identity, " +
				"containerd and the kubelet. Each check is ok, warn or FAIL with its evidence and a fix; exit 1 when one failed.",
			flags: func(prog string) *pflag.FlagSet {
				var f doctorFlags
				return f.flagSet(prog)
			},
			run: runDoctor,
		},
		{
			name: "version", synopsis: "[--output text|json]",
			summary: "print the version, the commit and the Go version it was built from",
			about:   "Prints eksboot's version, the commit it was built from and when that was committed, and the Go version.",
			flags: func(prog string) *pflag.FlagSet {
				var o versionOptions
				return o.flagSet(prog)
			},
			run: runVersion,
		},
		{
			name: "completion", synopsis: "bash|zsh|fish",
			summary: "print the shell completion script of bash, zsh or fish",
			about: "Prints the completion script of a shell: commands, flags and the values of flags such as --ip-family. " +
				"Load it with: source <(eksboot completion bash); eksboot completion zsh > \"${fpath[1]}/_eksboot\"; " +
				"eksboot completion fish > ~/.config/fish/completions/eksboot.fish.",
			flags: helpOnlyFlags,
			run:   runCompletion,
			words: func() []string { return shells },
		},
		{
			name: "man", synopsis: "",
			summary: "print the eksboot(8) manual page (roff)",
			about:   "Prints the eksboot(8) manual page, made from the same flag definitions as the help: man -l <(eksboot man).",
			flags:   helpOnlyFlags,
			run:     runMan,
		},
		{
			name: "help", synopsis: "[COMMAND]",
			summary: "print the help of eksboot or of a command",
			about:   "Prints eksboot's help, or that of COMMAND (the same as eksboot COMMAND --help).",
			flags:   helpOnlyFlags,
			run:     runHelp,
			words:   commandNames,
		},
	}
}

// lookupCommand returns the command called name.
func lookupCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// commandNames lists the commands' names, in help's order.
func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

// helpOnlyFlags is the FlagSet of a command that has no option but -h, --help.
func helpOnlyFlags(prog string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(prog, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolP("help", "h", false, "print this help")
	return fs
}

// dispatch runs the command as prog (eksboot NAME), answering -h and --help itself.
func (c command) dispatch(prog string, args []string, stdout, stderr io.Writer) int {
	if c.wantsHelp(prog, args) {
		if err := c.writeHelp(stdout, prog); err != nil {
			return c.run(prog, args, stdout, stderr) // its own help, then
		}
		return ExitOK
	}
	return c.run(prog, args, stdout, stderr)
}

// wantsHelp reports whether args ask for the command's help: -h or --help parsed as
// the command parses them (so `--kubelet-extra-args --help` is a value, not help).
func (c command) wantsHelp(prog string, args []string) bool {
	if c.flags == nil {
		for _, a := range args {
			if a == "--" {
				break
			}
			if a == "-h" || a == "--help" {
				return true
			}
		}
		return false
	}
	fs := c.flags(prog)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return false // the command reports the error
	}
	h := fs.Lookup("help")
	return h != nil && h.Value.String() == "true"
}

// errNoHelp is a command without a FlagSet in the registry (TestEveryCommandHasFlagSet).
type errNoHelp struct{ name string }

func (e errNoHelp) Error() string { return e.name + ": no FlagSet in the command registry" }

// helpOf returns the command's usage line and paragraph, and its flags.
func (c command) helpOf(prog string) (head string, flags []flaghelp.Flag, err error) {
	if c.flags != nil {
		head = "Usage: " + strings.TrimSpace(prog+" "+c.synopsis) + "\n"
		if c.about != "" {
			head += "\n" + strings.Join(flaghelp.Wrap(c.about, flaghelp.Width), "\n") + "\n"
		}
		return head, withKnownArgs(flaghelp.Flags(c.flags(prog))), nil
	}
	return "", nil, errNoHelp{c.name}
}

// writeHelp writes the command's help: usage line, paragraph and options.
func (c command) writeHelp(w io.Writer, prog string) error {
	head, flags, err := c.helpOf(prog)
	if err != nil {
		return err
	}
	_, _ = io.WriteString(w, head+"\nOptions:\n")
	flaghelp.WriteFlags(w, flags)
	return nil
}

// knownArgs are the values and file arguments of flags that their FlagSet does not
// annotate (flaghelp.SetValues), by flag name: the same name means the same thing in
// every command.
var knownArgs = map[string]flaghelp.Flag{
	"phase":             {Values: []string{phaseAll, phaseConfig, phaseRun}},
	"image-profile":     {Values: bootstrap.ProfileNames()},
	"log-format":        {Values: []string{bootstrap.LogConsole, bootstrap.LogJSON, bootstrap.LogJournal}},
	"output":            {Values: []string{"text", "json"}},
	"root":              {Arg: "dir"},
	"user-data":         {Arg: "file"},
	"eni-max-pods-file": {Arg: "file"},
}

// withKnownArgs fills in knownArgs where a flag says nothing of its values.
func withKnownArgs(flags []flaghelp.Flag) []flaghelp.Flag {
	for i, f := range flags {
		k, ok := knownArgs[f.Name]
		if !ok || f.Type == "" {
			continue
		}
		if len(f.Values) == 0 {
			flags[i].Values = k.Values
		}
		if f.Arg == "" {
			flags[i].Arg = k.Arg
		}
	}
	return flags
}
