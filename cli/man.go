package cli

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/eksboot/eksboot/internal/flaghelp"
)

// runMan is `eksboot man`: the eksboot(8) manual page, in roff, from the commands'
// own flag definitions (make man writes it, the node image installs it).
func runMan(prog string, args []string, stdout, stderr io.Writer) int {
	fs := helpOnlyFlags(prog)
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", prog, err)
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected arguments %q (see --help)\n", prog, fs.Args())
		return ExitUsage
	}
	bi, _ := debug.ReadBuildInfo()
	_, _ = io.WriteString(stdout, manPage(buildVersion(bi, Version)))
	return ExitOK
}

// roff escapes text for a roff line: backslashes, hyphens (so that man prints flags
// as typed, and searches find them) and a leading dot or quote.
func roff(s string) string {
	s = strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// manPage is eksboot(8). It is pure but for the commands' help, which it reads as
// help does.
func manPage(v versionInfo) string {
	var b strings.Builder
	date := ""
	if len(v.CommitTime) >= 10 {
		date = v.CommitTime[:10] // the commit's, so that a rebuild gives the same page
	}
	fmt.Fprintf(&b, ".TH EKSBOOT 8 %q %q \"System Administration\"\n", date, "eksboot "+v.Version)
	b.WriteString(".SH NAME\neksboot \\- join an EC2 instance to an Amazon EKS cluster\n")
	b.WriteString(".SH SYNOPSIS\n.B eksboot\n.I COMMAND\n[options]\n.br\n.B /etc/eks/bootstrap.sh\n[options]\n.I CLUSTER_NAME\n")
	b.WriteString(".SH DESCRIPTION\n" + roff(about) + "\n.PP\n" +
		roff("Invoked as bootstrap.sh (the node image's /etc/eks/bootstrap.sh execs it), eksboot runs the bootstrap command: the same command line gives the same node as Amazon Linux 2's bootstrap.sh.") +
		"\n.PP\n" + roff("On today's images, the units eksboot-config.service and eksboot-run.service run eksboot init at boot, before and after cloud-init, with the NodeConfig parts of the instance's user data.") + "\n")
	b.WriteString(".SH COMMANDS\n")
	top := "eksboot"
	for _, c := range commands() {
		head, flags, err := c.helpOf(top + " " + c.name)
		fmt.Fprintf(&b, ".SS \"%s\"\n", roff(strings.TrimSpace("eksboot "+c.name+" "+c.synopsis)))
		text := c.about
		if text == "" {
			text = aboutFromHelp(head, c.summary)
		}
		b.WriteString(roff(text) + "\n")
		if err != nil {
			continue
		}
		for _, f := range flags {
			b.WriteString(manFlag(f))
		}
	}
	b.WriteString(`.SH EXIT STATUS
.TP
.B 0
The command succeeded.
.TP
.B 1
It failed: a fact could not be read, a file could not be written, a systemd job did not end in done, or a signal stopped it.
.TP
.B 2
Bad usage: an unknown command or flag, or a value that is not allowed. The error names the flag and what it allows; nothing is written.
`)
	b.WriteString(".SH ENVIRONMENT\n" + roff("Each bootstrap.sh flag falls back to its variable, named in brackets after the flag above ([$USE_MAX_PODS]).") + "\n")
	for _, e := range [][2]string{
		{"JOURNAL_STREAM", "set by systemd when stderr is the journal: eksboot then logs through the journal's protocol, each line at its priority (journalctl -p warning shows the warnings), with the fields EKSBOOT_STEP, EKSBOOT_TOOK and the others of the line."},
		{"AWS_EC2_METADATA_SERVICE_ENDPOINT", "the instance metadata service, as for the AWS SDKs (--imds-endpoint wins)."},
		{"AWS_REGION, AWS_ENDPOINT_URL_EC2, AWS_ENDPOINT_URL_EKS, AWS_CA_BUNDLE", "as for the AWS SDKs, for the EC2 and EKS calls."},
	} {
		fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", roff(e[0]), roff(e[1]))
	}
	b.WriteString(".SH FILES\n")
	for _, f := range [][2]string{
		{"/etc/eks/bootstrap.sh", "the bootstrap.sh shim, which execs eksboot bootstrap."},
		{"/etc/eks/nodeadm.d/", "nodeadm's NodeConfig drop-ins (*.yaml, *.yml, *.json, in name order), merged after the user data's (eksboot init), as nodeadm merges them."},
		{"/etc/eks/eksboot.d/*.yaml", "eksboot's NodeConfig drop-ins, merged after nodeadm's (eksboot init): they win a field both set."},
		{"/var/lib/eksboot/clusters/", "the cluster's eks:DescribeCluster answer, so that a reboot makes no call."},
	} {
		fmt.Fprintf(&b, ".TP\n.I %s\n%s\n", roff(f[0]), roff(f[1]))
	}
	b.WriteString(".SH SEE ALSO\n.BR kubelet (8),\n.BR systemd.unit (5),\n.BR journalctl (1)\n")
	return b.String()
}

// aboutFromHelp is the paragraph of a help text read back (its lines after the
// usage line), or summary.
func aboutFromHelp(head, summary string) string {
	_, rest, ok := strings.Cut(strings.TrimSpace(head), "\n")
	if rest = strings.TrimSpace(rest); !ok || rest == "" {
		return summary
	}
	return strings.Join(strings.Fields(rest), " ")
}

// manFlag is one flag as a tagged paragraph.
func manFlag(f flaghelp.Flag) string {
	tag := `\fB\-\-` + roff(f.Name) + `\fR`
	if f.Shorthand != "" {
		tag = `\fB\-` + roff(f.Shorthand) + `\fR, ` + tag
	}
	if f.Type != "" {
		tag += ` \fI` + roff(f.Type) + `\fR`
	}
	text := roff(f.Text())
	if len(f.Values) > 0 {
		text += " One of: " + roff(strings.Join(f.Values, ", ")) + "."
	}
	return ".TP\n" + tag + "\n" + text + "\n"
}
