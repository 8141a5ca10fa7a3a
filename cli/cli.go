// Package cli is eksboot's command line: it picks the command from its registry
// (commands.go: bootstrap, init, render, max-pods, version, completion, man, help;
// the bootstrap command's flags and their defaults are package cli/flags'),
// writes help, completion scripts and the man page from the commands' own flag sets,
// sets up logging (the journal under systemd) and turns errors into exit statuses (2
// for usage, 1 for failures). It exists so that cmd/eksboot/main.go stays a few lines
// and every command can be tested in-process.
//
// A command here parses its command line, calls the package that does the work and
// prints the outcome: bootstrap (cli/flags.Parse, bootstrap.Validate, Run), init (the user
// data from IMDS, bootstrap.RequestFromNodeConfigs, Run), doctor (package doctor). A
// session (newSession) adds the signal handling: where a stop signal found the run
// comes from bootstrap.Env.OnStep. render is the exception: its command line is here
// (RenderFlags), its implementation is a program of its own, eksboot-render
// (cli/rendercmd), which execRender execs, so that the node's binary does not link the
// user data's simulator (render.go).
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
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/cli/flags"
	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/internal/scrub"
	"github.com/eksboot/eksboot/rootfs"
)

// Version is eksboot's version from git tags (tools/release version: v0.3.0 at a
// release tag, v0.3.0+4.g0123456789ab after one), set at build time with
// -ldflags "-X github.com/eksboot/eksboot/cli.Version=..." by make build and the
// packages (the commit, its time and the Go version come from the build
// information: version.go).
var Version = "dev"

// Exit statuses, of every command and of eksboot-render (cli/rendercmd).
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
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
		writeUsage(stderr, prog)
		return ExitUsage
	}
	// The commands are in commands() (help, completion and the man page list them
	// from there); a case here is for what is not a command.
	switch cmd := rest[0]; cmd {
	case "--version":
		return runVersion(prog+" version", rest[1:], stdout, stderr)
	case "-h", "--help":
		writeUsage(stdout, prog)
		return ExitOK
	default:
		c, ok := lookupCommand(cmd)
		if !ok {
			fmt.Fprintf(stderr, "%s: unknown command %s (want %s; see %s help)\n", prog, quote.Value(cmd), strings.Join(commandNames(), ", "), prog)
			return ExitUsage
		}
		return c.dispatch(prog+" "+c.name, rest[1:], stdout, stderr)
	}
}

// runBootstrap parses the bootstrap command line and runs it.
func runBootstrap(prog string, args []string, stdout, stderr io.Writer) int {
	o, err := flags.Parse(args, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", prog, err)
		return ExitUsage
	}
	if o.Help {
		flags.Usage(stdout, prog)
		return ExitOK
	}
	c, err := bootstrap.Validate(o)
	if err != nil {
		return Finish(prog, err, zap.NewNop(), stderr)
	}
	s, code := newSession(prog, c.Settings, stdout, stderr)
	if s == nil {
		return code
	}
	defer s.close()
	return s.finish(prog, bootstrap.Run(s.ctx, c, s.env), stderr)
}

// session is what a command that configures a node needs: its logger, its root, a
// context that SIGINT and SIGTERM cancel, and the bootstrap environment.
type session struct {
	log  *zap.Logger
	ctx  context.Context
	env  *bootstrap.Env
	run  *runState
	stop context.CancelFunc
}

// stopGrace is how long a run told to stop (SIGTERM, SIGINT) may take to end once its
// context is cancelled. A run that is still blocked then (in a system call that no
// context reaches) is given up: the process reports where it was and exits 1.
const stopGrace = time.Second

// newSession sets up a session for the settings o. A bad --log-format or --root gets
// one line on stderr and a nil session with ExitUsage.
func newSession(prog string, o bootstrap.Settings, stdout, stderr io.Writer) (*session, int) {
	log, err := NewLogger(o.LogFormat, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return nil, ExitUsage
	}
	root, err := rootfs.New(o.Root)
	if err != nil {
		fmt.Fprintf(stderr, "%s: --root: %v\n", prog, err)
		return nil, ExitUsage
	}
	run := &runState{}
	ctx, cancel := context.WithCancelCause(context.Background())
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	closed := make(chan struct{})
	go func() {
		var sig os.Signal
		select {
		case sig = <-signals:
		case <-closed:
			return
		}
		run.signalled(sig)
		cancel(stopSignal{sig})
		select {
		case <-closed:
		case <-time.After(stopGrace):
			if line, ok := run.giveUp(prog); ok {
				_ = log.Sync()
				fmt.Fprintln(stderr, line)
				os.Exit(ExitFailure)
			}
		}
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			signal.Stop(signals)
			close(closed)
			cancel(context.Canceled)
		})
	}
	env := bootstrap.DefaultEnv(root, log, stdout, stderr)
	env.OnStep = run.step
	envHook(env)
	return &session{log: log, ctx: ctx, env: env, run: run, stop: stop}, ExitOK
}

// close releases the signal handler and flushes the log.
func (s *session) close() {
	s.stop()
	_ = s.log.Sync()
}

// stopSignal is the cause of a session's cancelled context: the signal that told the
// run to stop. It is context.Canceled to errors.Is.
type stopSignal struct{ sig os.Signal }

func (e stopSignal) Error() string { return signalName(e.sig) + " received" }

func (e stopSignal) Is(target error) bool { return target == context.Canceled }

// signalName is a signal as systemd and kill(1) name it.
func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case os.Interrupt:
		return "SIGINT"
	}
	return sig.String()
}

// runState follows a session's run through its steps (bootstrap.Env.OnStep), to
// say where a stop signal found it.
type runState struct {
	mu       sync.Mutex
	sig      os.Signal
	running  string // the step that has started and not ended, if it says so
	done     string // the last step that ended well
	failed   string // the step that failed
	wrote    bool   // the write step began or ended: files may have changed
	reported bool   // the stop has been reported (by finish or by giveUp)
}

func (r *runState) signalled(sig os.Signal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sig = sig
}

func (r *runState) step(e bootstrap.StepEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case !e.Ended:
		r.running = e.Step
	case e.Err == nil:
		r.done, r.running = e.Step, ""
	default:
		r.failed, r.running = e.Step, ""
	}
	if e.Step == "write" {
		r.wrote = true
	}
}

// stopped returns the line that reports a stop of the run, and whether the run was
// told to stop (and this is the first report of it). blocked says the run has not
// ended.
func (r *runState) stopped(prog string, blocked bool) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sig == nil || r.reported {
		return "", false
	}
	r.reported = true
	var where string
	switch {
	case r.failed != "":
		where = fmt.Sprintf("in the %q step", r.failed)
	case r.running != "":
		where = fmt.Sprintf("in the %q step", r.running)
	case r.done != "":
		where = fmt.Sprintf("after the %q step", r.done)
	default:
		where = "before its first step ended"
	}
	line := fmt.Sprintf("%s: stopped by %s %s", prog, signalName(r.sig), where)
	switch {
	case !r.wrote && (!blocked || r.done != "diff"):
		line += " (no file written)"
	case blocked:
		line += " (the node's files may be partly updated; run it again)"
	}
	if blocked {
		line += fmt.Sprintf(": still blocked %v after the signal, given up", stopGrace)
	}
	return line, true
}

// ended records that the run ended well: a signal that came too late to stop it is
// not reported.
func (r *runState) ended() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reported = true
}

// giveUp is stopped for a run that did not end within stopGrace.
func (r *runState) giveUp(prog string) (string, bool) { return r.stopped(prog, true) }

// maxLine bounds the error line Finish writes.
const maxLine = 8 << 10

// Finish reports err, of a command that ran no session, as one line and returns the
// exit status for it (cli/rendercmd's too).
func Finish(prog string, err error, log *zap.Logger, stderr io.Writer) int {
	return finishRun(prog, err, log, nil, stderr)
}

// finish reports the session's err as one line and returns the exit status for it.
// A run that a signal stopped says so, and where (exit 1).
func (s *session) finish(prog string, err error, stderr io.Writer) int {
	return finishRun(prog, err, s.log, s.run, stderr)
}

// finishRun is Finish, with the session's run (r, nil without one).
func finishRun(prog string, err error, log *zap.Logger, r *runState, stderr io.Writer) int {
	if err == nil {
		if r != nil {
			r.ended()
		}
		log.Info("complete")
		return ExitOK
	}
	_ = log.Sync()
	// The clients scrub what they quote; this is the last guard of the process's own
	// credentials (scrub.Process).
	msg := strings.ReplaceAll(scrub.Process.Remove(err.Error()), "\n", " ")
	if len(msg) > maxLine {
		// Values and problem lists are capped where they are quoted; this is the
		// last guard of one readable line (journald splits longer ones).
		cut := maxLine
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = fmt.Sprintf("%s…(%d bytes)", msg[:cut], len(msg))
	}
	if r != nil {
		if line, ok := r.stopped(prog, false); ok {
			fmt.Fprintf(stderr, "%s: %s\n", line, msg)
			return ExitFailure
		}
	}
	var ue *bootstrap.UsageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "%s: %s\n", prog, msg)
		return ExitUsage
	}
	fmt.Fprintf(stderr, "%s: error: %s\n", prog, msg)
	return ExitFailure
}
