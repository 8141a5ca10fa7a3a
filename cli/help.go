package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/eksboot/eksboot/internal/flaghelp"
	"github.com/eksboot/eksboot/internal/quote"
)

// about is what eksboot is, in one line.
const about = "eksboot joins an EC2 instance to an Amazon EKS cluster (a drop-in for /etc/eks/bootstrap.sh)."

// writeUsage writes eksboot's own help: the commands and what each does.
func writeUsage(w io.Writer, prog string) {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s COMMAND [options]\n\n%s\n\nCommands:\n", prog, about)
	cmds := commands()
	col := 0
	for _, c := range cmds {
		col = max(col, len(c.name)+4)
	}
	for _, c := range cmds {
		lines := flaghelp.Wrap(c.summary, flaghelp.Width-col-2)
		fmt.Fprintf(&b, "  %-*s%s\n", col, c.name, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(&b, "  %*s%s\n", col, "", l)
		}
	}
	fmt.Fprintf(&b, "\nRun '%[1]s help COMMAND' or '%[1]s COMMAND --help' for a command's options.\n", prog)
	b.WriteString("Invoked as bootstrap.sh, eksboot runs the bootstrap command.\n")
	_, _ = io.WriteString(w, b.String())
}

// runHelp is `eksboot help [COMMAND]`.
func runHelp(prog string, args []string, stdout, stderr io.Writer) int {
	top := strings.TrimSuffix(prog, " help")
	fs := helpOnlyFlags(prog)
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", prog, err)
		return ExitUsage
	}
	switch fs.NArg() {
	case 0:
		writeUsage(stdout, top)
		return ExitOK
	case 1:
	default:
		fmt.Fprintf(stderr, "%s: want one COMMAND, got %d arguments\n", prog, fs.NArg())
		return ExitUsage
	}
	c, ok := lookupCommand(fs.Arg(0))
	if !ok {
		fmt.Fprintf(stderr, "%s: unknown command %s (want %s)\n", prog, quote.Value(fs.Arg(0)), strings.Join(commandNames(), ", "))
		return ExitUsage
	}
	return c.dispatch(top+" "+c.name, []string{"--help"}, stdout, stderr)
}
