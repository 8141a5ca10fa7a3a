package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/eksboot/eksboot/internal/flaghelp"
)

// shells are the shells `eksboot completion` writes a script for.
var shells = []string{"bash", "zsh", "fish"}

// completed is one command as a completion script sees it.
type completed struct {
	name, summary string
	flags         []flaghelp.Flag
	words         []string
}

// completionModel reads every command's flags as its help shows them.
func completionModel(top string) []completed {
	var out []completed
	for _, c := range commands() {
		_, flags, err := c.helpOf(top + " " + c.name)
		if err != nil {
			flags = nil // a command without readable help completes its name only
		}
		cc := completed{name: c.name, summary: c.summary, flags: flags}
		if c.words != nil {
			cc.words = c.words()
		}
		out = append(out, cc)
	}
	return out
}

// runCompletion is `eksboot completion bash|zsh|fish`.
func runCompletion(prog string, args []string, stdout, stderr io.Writer) int {
	fs := helpOnlyFlags(prog)
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", prog, err)
		return ExitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "%s: want one shell: %s\n", prog, strings.Join(shells, ", "))
		return ExitUsage
	}
	model := completionModel(strings.TrimSuffix(prog, " completion"))
	switch fs.Arg(0) {
	case "bash":
		_, _ = io.WriteString(stdout, bashCompletion(model))
	case "zsh":
		_, _ = io.WriteString(stdout, zshCompletion(model))
	case "fish":
		_, _ = io.WriteString(stdout, fishCompletion(model))
	default:
		fmt.Fprintf(stderr, "%s: shell %q: want %s\n", prog, fs.Arg(0), strings.Join(shells, ", "))
		return ExitUsage
	}
	return ExitOK
}

// flagWords are a flag's words on the command line: --name, and -x.
func flagWords(f flaghelp.Flag) []string {
	w := []string{"--" + f.Name}
	if f.Shorthand != "" {
		w = append(w, "-"+f.Shorthand)
	}
	return w
}

// bashCompletion is the bash script: a function for `complete -F`.
func bashCompletion(model []completed) string {
	var b strings.Builder
	b.WriteString(`# bash completion for eksboot (eksboot completion bash). Load it with
#   source <(eksboot completion bash)
# or install it as /usr/share/bash-completion/completions/eksboot.
_eksboot() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD-1]}
	# bash splits --flag=value at the = (COMP_WORDBREAKS).
	if [[ $cur == = ]]; then
		cur=
	elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
		prev=${COMP_WORDS[COMP_CWORD-2]}
	fi
	local cmd= i
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	COMPREPLY=()
	if [[ -z $cmd ]]; then
`)
	var names []string
	for _, c := range model {
		names = append(names, c.name)
	}
	fmt.Fprintf(&b, "\t\tCOMPREPLY=($(compgen -W '%s' -- \"$cur\"))\n\t\treturn\n\tfi\n\tcase $cmd in\n", strings.Join(names, " "))
	for _, c := range model {
		fmt.Fprintf(&b, "\t%s)\n\t\tcase $prev in\n", c.name)
		var valueFlags, all []string
		for _, f := range c.flags {
			all = append(all, flagWords(f)...)
			if f.Type == "" {
				continue
			}
			pat := strings.Join(flagWords(f), "|")
			switch {
			case len(f.Values) > 0:
				fmt.Fprintf(&b, "\t\t%s) COMPREPLY=($(compgen -W '%s' -- \"$cur\")); return ;;\n", pat, strings.Join(f.Values, " "))
			case f.Arg == "dir":
				fmt.Fprintf(&b, "\t\t%s) COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n", pat)
			case f.Arg == "file":
				fmt.Fprintf(&b, "\t\t%s) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", pat)
			default:
				valueFlags = append(valueFlags, pat)
			}
		}
		if len(valueFlags) > 0 {
			fmt.Fprintf(&b, "\t\t%s) return ;;\n", strings.Join(valueFlags, "|"))
		}
		b.WriteString("\t\tesac\n")
		if len(c.words) > 0 {
			fmt.Fprintf(&b, "\t\tif [[ $cur != -* ]]; then\n\t\t\tCOMPREPLY=($(compgen -W '%s' -- \"$cur\"))\n\t\t\treturn\n\t\tfi\n", strings.Join(c.words, " "))
		}
		fmt.Fprintf(&b, "\t\tCOMPREPLY=($(compgen -W '%s' -- \"$cur\"))\n\t\t;;\n", strings.Join(all, " "))
	}
	b.WriteString("\tesac\n}\ncomplete -F _eksboot eksboot\n")
	return b.String()
}

// shortText is a flag's usage cut for a completion menu: up to the first " (" or
// ";", at most 70 bytes.
func shortText(s string) string {
	for _, sep := range []string{"; ", " ("} {
		if i := strings.Index(s, sep); i > 0 {
			s = s[:i]
		}
	}
	if len(s) > 70 {
		s = flaghelp.Wrap(s, 67)[0] + "..."
	}
	return s
}

// zshQuote is s in single quotes, for a zsh word.
func zshQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// zshText escapes a description for an _arguments spec or a _describe entry.
func zshText(s string) string {
	return strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`, ":", `\:`).Replace(shortText(s))
}

// zshCompletion is the zsh script: a #compdef function for $fpath, that also
// registers itself when sourced.
func zshCompletion(model []completed) string {
	var b strings.Builder
	b.WriteString(`#compdef eksboot
# zsh completion for eksboot (eksboot completion zsh). Install it as _eksboot in a
# directory of $fpath (/usr/share/zsh/vendor-completions on Debian), or
#   source <(eksboot completion zsh)
# after compinit.
_eksboot() {
	local -a cmds
	cmds=(
`)
	for _, c := range model {
		fmt.Fprintf(&b, "\t\t%s\n", zshQuote(c.name+":"+zshText(c.summary)))
	}
	b.WriteString("\t)\n\tif ((CURRENT == 2)); then\n\t\t_describe -t commands 'eksboot command' cmds\n\t\treturn\n\tfi\n")
	b.WriteString("\tlocal cmd=${words[2]}\n\tshift words\n\t((CURRENT--))\n\tcase $cmd in\n")
	for _, c := range model {
		fmt.Fprintf(&b, "\t%s)\n\t\t_arguments -s", c.name)
		for _, f := range c.flags {
			desc := "[" + zshText(f.Usage) + "]"
			var arg string
			if f.Type != "" {
				switch {
				case len(f.Values) > 0:
					arg = ":" + f.Name + ":(" + strings.Join(f.Values, " ") + ")"
				case f.Arg == "dir":
					arg = ":directory:_files -/"
				case f.Arg == "file":
					arg = ":file:_files"
				default:
					arg = ":" + f.Type + ": "
				}
			}
			eq, plus := "", ""
			if f.Type != "" {
				eq, plus = "=", "+"
			}
			if f.Shorthand != "" {
				fmt.Fprintf(&b, " \\\n\t\t\t'(-%s --%s)'{-%s%s,--%s%s}%s", f.Shorthand, f.Name, f.Shorthand, plus, f.Name, eq, zshQuote(desc+arg))
			} else {
				fmt.Fprintf(&b, " \\\n\t\t\t%s", zshQuote("--"+f.Name+eq+desc+arg))
			}
		}
		if len(c.words) > 0 {
			fmt.Fprintf(&b, " \\\n\t\t\t%s", zshQuote("1:argument:("+strings.Join(c.words, " ")+")"))
		}
		b.WriteString("\n\t\t;;\n")
	}
	b.WriteString("\tesac\n}\n")
	b.WriteString(`if [[ ${funcstack[1]} == _eksboot ]]; then
	_eksboot "$@"
else
	compdef _eksboot eksboot
fi
`)
	return b.String()
}

// fishQuote is s in single quotes, for a fish word.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

// fishCompletion is the fish script: complete lines for each command's flags.
func fishCompletion(model []completed) string {
	var b strings.Builder
	b.WriteString(`# fish completion for eksboot (eksboot completion fish). Install it as
# ~/.config/fish/completions/eksboot.fish or /usr/share/fish/vendor_completions.d/eksboot.fish.

# __fish_eksboot_command prints the command given so far (the first word that is
# not a flag), and fails when there is none.
function __fish_eksboot_command
	for t in (commandline -opc)[2..-1]
		string match -q -- '-*' $t; and continue
		echo $t
		return 0
	end
	return 1
end

# __fish_eksboot_command_is succeeds when the command given so far is $argv[1].
function __fish_eksboot_command_is
	set -l c (__fish_eksboot_command); or return 1
	test "$c" = "$argv[1]"
end

complete -c eksboot -f
`)
	for _, c := range model {
		fmt.Fprintf(&b, "complete -c eksboot -n 'not __fish_eksboot_command' -a %s -d %s\n", c.name, fishQuote(shortText(c.summary)))
	}
	for _, c := range model {
		cond := fishQuote("__fish_eksboot_command_is " + c.name)
		for _, f := range c.flags {
			line := fmt.Sprintf("complete -c eksboot -n %s -l %s", cond, f.Name)
			if f.Shorthand != "" {
				line += " -s " + f.Shorthand
			}
			if f.Type != "" {
				switch {
				case len(f.Values) > 0:
					line += " -x -a " + fishQuote(strings.Join(f.Values, " "))
				case f.Arg == "dir":
					line += " -x -a '(__fish_complete_directories)'"
				case f.Arg == "file":
					line += " -r -F"
				default:
					line += " -x"
				}
			}
			b.WriteString(line + " -d " + fishQuote(shortText(f.Usage)) + "\n")
		}
		if len(c.words) > 0 {
			fmt.Fprintf(&b, "complete -c eksboot -n %s -a %s\n", cond, fishQuote(strings.Join(c.words, " ")))
		}
	}
	return b.String()
}
