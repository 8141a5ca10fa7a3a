// Package cli is eksboot's command line: it picks the command (bootstrap, version,
// demo), sets up logging and turns errors into exit statuses (2 for usage, 1 for
// failures). It exists so that cmd/eksboot/main.go stays a few lines and every command
// can be tested in-process.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"go.uber.org/zap"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/rootfs"
)

// Version is eksboot's version, set at build time with
// -ldflags "-X github.com/eksboot/eksboot/cli.Version=...".
var Version = "dev"

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// Main runs eksboot with args (args[0] is the program name) and returns the exit
// status. Invoked as bootstrap.sh (e.g. through the /etc/eks/bootstrap.sh symlink) it
// behaves as `eksboot bootstrap`.
func Main(args []string, stdout, stderr io.Writer) int {
	prog := filepath.Base(args[0])
	rest := args[1:]
	if prog == "bootstrap.sh" {
		return runBootstrap(prog, rest, stdout, stderr)
	}
	if len(rest) == 0 {
		usage(stderr, prog)
		return exitUsage
	}
	switch cmd := rest[0]; cmd {
	case "bootstrap":
		return runBootstrap(prog+" bootstrap", rest[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintf(stdout, "eksboot %s\n", Version)
		return exitOK
	case "demo":
		return runDemo(rest[1:], stdout, stderr)
	case "max-pods":
		return runMaxPods(prog+" max-pods", rest[1:], stdout, stderr)
	case "init":
		return runInit(prog+" init", rest[1:], stdout, stderr)
	case "render":
		return runRender(prog+" render", rest[1:], stdout, stderr)
	case "help", "-h", "--help":
		usage(stdout, prog)
		return exitOK
	default:
		fmt.Fprintf(stderr, "%s: unknown command %q (want bootstrap, init, render, max-pods, version, demo or help)\n", prog, cmd)
		return exitUsage
	}
}

func usage(w io.Writer, prog string) {
	fmt.Fprintf(w, `Usage: %[1]s COMMAND [options]

eksboot joins an EC2 instance to an Amazon EKS cluster (a drop-in for /etc/eks/bootstrap.sh).

Commands:
  bootstrap [options] CLUSTER_NAME   configure and start the kubelet (see %[1]s bootstrap --help)
  init [--phase config|run]          configure the node from the NodeConfig parts of its user data (see %[1]s init --help)
  render --user-data F --instance-type T   print what a node launched with that user data would get (offline)
  max-pods [options]                 print the kubelet max pods of an instance type (max-pods-calculator.sh's options, --explain)
  demo                               run bootstrap end to end against a simulated instance, into a temporary root
  version                            print the version

Invoked as bootstrap.sh, eksboot runs the bootstrap command.
`, prog)
}

// runBootstrap parses the bootstrap command line and runs it.
func runBootstrap(prog string, args []string, stdout, stderr io.Writer) int {
	o, err := bootstrap.Parse(args, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", prog, err)
		return exitUsage
	}
	if o.Help {
		bootstrap.Usage(stdout, prog)
		return exitOK
	}
	c, err := bootstrap.Validate(o)
	if err != nil {
		return finish(prog, err, zap.NewNop(), stderr)
	}
	s, code := newSession(prog, c.Settings, stdout, stderr)
	if s == nil {
		return code
	}
	defer s.close()
	return finish(prog, bootstrap.Run(s.ctx, c, s.env), s.log, stderr)
}

// session is what a command that configures a node needs: its logger, its root, a
// context that SIGINT and SIGTERM cancel, and the bootstrap environment.
type session struct {
	log  *zap.Logger
	ctx  context.Context
	env  *bootstrap.Env
	stop context.CancelFunc
}

// newSession sets up a session for the settings o. A bad --log-format or --root gets
// one line on stderr and a nil session with exitUsage.
func newSession(prog string, o bootstrap.Settings, stdout, stderr io.Writer) (*session, int) {
	log, err := newLogger(o.LogFormat, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return nil, exitUsage
	}
	root, err := rootfs.New(o.Root)
	if err != nil {
		fmt.Fprintf(stderr, "%s: --root: %v\n", prog, err)
		return nil, exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	env := bootstrap.DefaultEnv(root, log, stdout, stderr)
	envHook(env)
	return &session{log: log, ctx: ctx, env: env, stop: stop}, exitOK
}

// close releases the signal handler and flushes the log.
func (s *session) close() {
	s.stop()
	_ = s.log.Sync()
}

// finish reports err as one line and returns the exit status for it.
func finish(prog string, err error, log *zap.Logger, stderr io.Writer) int {
	if err == nil {
		log.Info("complete")
		return exitOK
	}
	_ = log.Sync()
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	var ue *bootstrap.UsageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "%s: %s\n", prog, msg)
		return exitUsage
	}
	fmt.Fprintf(stderr, "%s: error: %s\n", prog, msg)
	return exitFailure
}
