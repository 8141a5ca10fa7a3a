package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/doctor"
	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/rootfs"
)

// The status a run records carries the version of the binary that ran it (set at
// link time, so already there when package variables are initialised).
func init() { bootstrap.StatusVersion = Version }

// doctorFlags are the options of `eksboot doctor`.
type doctorFlags struct {
	root, output, imdsEndpoint string
	timeout                    time.Duration
	help                       bool
}

func (f *doctorFlags) flagSet(prog string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(prog, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.root, "root", "/", "the node's root: every file is read under it")
	fs.StringVar(&f.output, "output", "text", "output format: text or json")
	fs.DurationVar(&f.timeout, "timeout", 60*time.Second, "bound on the whole checklist (each network check has at most 5s of it)")
	fs.StringVar(&f.imdsEndpoint, "imds-endpoint", "", "instance metadata service URL [$AWS_EC2_METADATA_SERVICE_ENDPOINT, $IMDS_ENDPOINT host[:port]]")
	fs.BoolVarP(&f.help, "help", "h", false, "print this help")
	return fs
}

// runDoctor runs the checklist: exit 0 when no check failed, 1 when one did, 2 for a
// usage error.
func runDoctor(prog string, args []string, stdout, stderr io.Writer) int {
	var f doctorFlags
	fs := f.flagSet(prog)
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", prog, err)
		return ExitUsage
	}
	if f.help {
		fmt.Fprintf(stdout, "Usage: %s [--root DIR] [--output text|json] [--timeout D]\n\n"+
			"Checks why the node may be NotReady: IMDS, what eksboot wrote, the API server, the node's identity,\n"+
			"containerd and the kubelet. Each check is ok, warn or FAIL with its evidence and a fix (skip: --timeout left it\n"+
			"no time); exit 1 when one failed.\n\n%s",
			prog, fs.FlagUsages())
		return ExitOK
	}
	var problem string
	switch {
	case fs.NArg() > 0:
		problem = fmt.Sprintf("unexpected arguments %q", fs.Args())
	case f.output != "text" && f.output != "json":
		problem = fmt.Sprintf("--output %q: want text or json", f.output)
	case f.root == "":
		problem = `--root "": want a directory (/ for this node)`
	case f.timeout <= 0:
		problem = fmt.Sprintf("--timeout %s: want a positive duration, such as 30s", f.timeout)
	}
	if problem != "" {
		fmt.Fprintf(stderr, "%s: %s\n", prog, problem)
		return ExitUsage
	}
	root, err := rootfs.New(f.root)
	if err != nil {
		fmt.Fprintf(stderr, "%s: --root: %v\n", prog, err)
		return ExitUsage
	}
	endpoint, err := imds.ResolveEndpoint(f.imdsEndpoint, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return ExitUsage
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	units := &doctor.DBusUnits{}
	defer units.Close()
	journal := doctor.JournalCtl{}
	if root.Dir() != "/" {
		journal.Args = []string{"--root=" + root.Dir()}
	}
	env := &doctor.Env{
		Files:    root,
		IMDS:     doctor.NewHTTPIMDS(endpoint),
		Resolver: net.DefaultResolver,
		Dialer:   &net.Dialer{},
		Now:      time.Now,
		Units:    units,
		Journal:  journal,
		Exec:     doctor.ExecRunner{Environ: os.Environ},
		Statfs:   doctor.SysStatfs{},
		CRI:      doctor.GRPCCRI{},
	}
	r := doctor.Run(ctx, env, doctor.Options{CheckTimeout: min(5*time.Second, f.timeout)})
	if f.output == "json" {
		err = r.WriteJSON(stdout)
	} else {
		err = r.WriteText(stdout)
	}
	if err != nil && !errors.Is(err, syscall.EPIPE) {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return ExitFailure
	}
	if r.Failed() {
		return ExitFailure
	}
	return ExitOK
}
