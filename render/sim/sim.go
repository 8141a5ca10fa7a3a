package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/eksboot/eksboot/userdata"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// BootstrapPath is the bootstrap.sh of the node images; EksbootPath is the binary its
// shim runs.
const (
	BootstrapPath = "/etc/eks/bootstrap.sh"
	EksbootPath   = "/usr/bin/eksboot"
)

// Limits bound an evaluation (docs/render.md lists them): the simple commands run,
// the wall time, the bytes written (files and output), how deep scripts may start
// scripts, what the variables hold together, what one statement may expand to, the
// bytes commands produce in all (into pipes and substitutions too), how deep
// functions, source and eval may nest, and how many pipelines and background jobs
// may run at once. Each is checked before the memory it bounds is taken.
type Limits struct {
	Steps     int
	Time      time.Duration
	Output    int
	Depth     int
	Vars      int
	Expansion int
	Data      int
	Nesting   int
	Jobs      int
}

// DefaultLimits are ample for launch tools' scripts and stop a loop within seconds,
// with render's memory under 256 MiB.
var DefaultLimits = Limits{
	Steps: 200_000, Time: 5 * time.Second, Output: 4 << 20, Depth: 16,
	Vars: 4 << 20, Expansion: 16 << 20, Data: 16 << 20, Nesting: 100, Jobs: 256,
}

// LimitError says the evaluation was stopped by a bound.
type LimitError struct{ What string }

func (e *LimitError) Error() string {
	return "the user data's scripts were stopped: " + e.What + " (an endless loop?); render evaluates scripts within bounds"
}

// Options describe the simulated node a user data's scripts run on.
type Options struct {
	// Image is the node image's files before boot (the bootstrap.sh shim among
	// them), by absolute path; ImageDirs are its folders that hold no file.
	Image     map[string]File
	ImageDirs []string
	// Metadata answers IMDS paths ("meta-data/instance-id", "api/token", without
	// "/latest/"); ok is false for a path the simulated instance cannot know.
	Metadata func(path string) (string, bool)
	// Bootstrap, when set, is what the node's `eksboot bootstrap` does with a
	// call: the files it writes, which the scripts after it see (and may edit).
	// It is called one call at a time, and never after Evaluate returns.
	Bootstrap func(ctx context.Context, c Call) (map[string]File, error)
	// Limits; zero fields take DefaultLimits'.
	Limits Limits
}

// Call is one bootstrap.sh invocation of the user data's scripts, as evaluated.
type Call struct {
	// Part is the user-data part whose evaluation made the call; Where says in
	// which script and line ("part 1 (text/x-shellscript) line 9", or a script
	// that part started).
	Part  userdata.Part
	Where string
	Line  int
	// Args are the words bootstrap.sh got, as bash would pass them.
	Args []string
	// Eksboot are the words the shim passed to `eksboot bootstrap`, after any
	// sed edits of the shim (nil when the image has no shim).
	Eksboot []string
	// Env is the call's exported environment (bootstrap.sh's fallbacks).
	Env map[string]string
	// Unknown lists what the arguments depend on that is known only at boot.
	Unknown []string
	// Node is the simulated node's files when the call was made: the image's, with
	// what the user data wrote before it (a script's edit of kubelet-config.json).
	Node Node
}

// Node is the simulated node's files at one moment: by absolute path, and every
// folder.
type Node struct {
	Files map[string]File
	Dirs  []string
}

// UnresolvedError says that a bootstrap.sh argument depends on something known only
// when the node boots (a program render does not simulate, a network answer).
type UnresolvedError struct {
	Where  string // "part 3 (text/x-shellscript) line 9"
	Reason string
}

func (e *UnresolvedError) Error() string {
	return fmt.Sprintf("%s: bootstrap.sh's arguments depend on %s, known only when the node boots (render does not guess it)", e.Where, e.Reason)
}

// PartReport is what one part contributed.
type PartReport struct {
	Part  userdata.Part
	Notes []string
}

// Evaluation is what the user data's scripts do on the simulated node.
type Evaluation struct {
	// Calls are the bootstrap.sh calls, in order.
	Calls []Call
	// Files are the files the user data wrote (path -> final content), in the order
	// first written (Written).
	Files   map[string]File
	Written []string
	// Node is the simulated node's files once the user data ran: the image's and
	// what the user data and bootstrap.sh wrote.
	Node Node
	// NotSimulated names the commands that ran as no-ops ("jq", "systemctl"), in
	// the order first seen.
	NotSimulated []string
	// Parts says what each part did, in cloud-init's order.
	Parts []PartReport
}

// sim is one evaluation's state, shared by every script it starts.
//
// The interpreter runs a pipeline's stages (and <(...), and background jobs) on
// goroutines of their own, each calling the handlers: mu guards the state below
// and fs's, and is held for in-memory work only, never across a Read or Write of a
// stream, a call into the interpreter or one of opts' hooks, so a stage blocked on
// its pipe holds nothing another stage needs.
type sim struct {
	opts       Options
	fs         *memFS
	stdout     *outWriter
	cancel     context.CancelCauseFunc
	goroutines int // the process's goroutines when the evaluation started

	mu       sync.Mutex
	calls    []Call
	notSim   []string
	unknowns []string
	steps    int
	pipes    int // <(...) files made
	out      int
	parts    []PartReport // what each part did, so far
	cur      int          // the part being run (parts' index)
	fatal    error        // the first bound hit, or the Bootstrap hook's error
	// bounds.go's counts
	guards    []*syntax.Stmt  // the statements the guards measure
	maxParams int             // the most bytes of positional parameters set
	data      int64           // bytes produced by commands
	funcs     map[string]bool // the names of the functions the scripts declare

	// bootMu makes the Bootstrap hook's calls one at a time, with the wall-time
	// bound, which is the scripts': it stops while Bootstrap runs (an EKS lookup
	// with --discover).
	bootMu   sync.Mutex
	timer    *time.Timer
	left     time.Duration
	started  time.Time
	finished bool // Evaluate returned: no more Bootstrap calls
}

// scriptRun is one script's run (runScript): fixed when it starts, so that the
// handlers of its stages read it at once without a lock.
type scriptRun struct {
	where   string       // the part and script being run, for messages and Call.Where
	depth   int          // scripts started to run it, itself included
	eksboot *eksbootCall // a bootstrap.sh call's shim: its exec of eksboot
}

// eksbootCall is what the shim passed to `eksboot bootstrap` (guarded by sim.mu).
type eksbootCall struct {
	ran  bool
	args []string
	env  map[string]string
}

func (s *sim) spendLocked(n int) error {
	s.out += n
	if s.out > s.opts.Limits.Output {
		return s.stopLocked(&LimitError{What: fmt.Sprintf("more than %d bytes written", s.opts.Limits.Output)})
	}
	return nil
}

func (s *sim) stop(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopLocked(err)
}

func (s *sim) stopLocked(err error) error {
	if s.fatal == nil {
		s.fatal = err
		s.cancel(err)
	}
	return s.fatal
}

// failed is the first bound hit, or the Bootstrap hook's error.
func (s *sim) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fatal
}

// unknown returns a placeholder for a value known only at boot; it is found again in
// bootstrap.sh's arguments.
func (s *sim) unknown(what string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unknowns = append(s.unknowns, what)
	return fmt.Sprintf("⟦unknown-%d⟧", len(s.unknowns))
}

var unknownMarkRE lazy[*regexp.Regexp]

func unknownMark() *regexp.Regexp {
	return unknownMarkRE.get(func() *regexp.Regexp { return regexp.MustCompile(`⟦unknown-(\d+)⟧`) })
}

// reasons lists what the placeholders in words stand for.
func (s *sim) reasons(words []string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, w := range words {
		for _, m := range unknownMark().FindAllStringSubmatch(w, -1) {
			n, _ := strconv.Atoi(m[1])
			if n >= 1 && n <= len(s.unknowns) && !slices.Contains(out, s.unknowns[n-1]) {
				out = append(out, s.unknowns[n-1])
			}
		}
	}
	return out
}

func (s *sim) noteNotSimulated(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.notSim, name) {
		s.notSim = append(s.notSim, name)
	}
}

func (s *sim) note(format string, a ...any) {
	n := fmt.Sprintf(format, a...)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.parts[s.cur].Notes = append(s.parts[s.cur].Notes, n)
}

// part is the part being run.
func (s *sim) part() userdata.Part {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.parts[s.cur].Part
}

// finish ends the evaluation's Bootstrap calls (one may still run in a background
// job of the scripts): Evaluate's caller has the hook back.
func (s *sim) finish() {
	s.cancel(nil) // a hook still running returns
	s.bootMu.Lock()
	defer s.bootMu.Unlock()
	s.finished = true
	s.timer.Stop()
}

// Evaluate runs the user data's scripts on a simulated node, in cloud-init's order,
// without running anything on the host: bootstrap.sh calls are captured (and the
// image's shim run as on a node), IMDS reads answered from opts.Metadata, files
// written to memory, text tools run in-process, and other programs are no-ops
// (NotSimulated) whose output is known only at boot. It fails only on a bound or a
// script that does not parse.
func Evaluate(ctx context.Context, parts []userdata.Part, opts Options) (*Evaluation, error) {
	def := DefaultLimits
	if opts.Limits.Steps == 0 {
		opts.Limits.Steps = def.Steps
	}
	if opts.Limits.Time == 0 {
		opts.Limits.Time = def.Time
	}
	if opts.Limits.Output == 0 {
		opts.Limits.Output = def.Output
	}
	if opts.Limits.Depth == 0 {
		opts.Limits.Depth = def.Depth
	}
	for _, l := range []struct {
		v *int
		d int
	}{
		{&opts.Limits.Vars, def.Vars},
		{&opts.Limits.Expansion, def.Expansion},
		{&opts.Limits.Data, def.Data},
		{&opts.Limits.Nesting, def.Nesting},
		{&opts.Limits.Jobs, def.Jobs},
	} {
		if *l.v == 0 {
			*l.v = l.d
		}
	}
	if opts.Metadata == nil {
		opts.Metadata = func(string) (string, bool) { return "", false }
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s := &sim{opts: opts, cancel: cancel, left: opts.Limits.Time, started: time.Now(), goroutines: runtime.NumGoroutine()}
	s.timer = time.AfterFunc(opts.Limits.Time, func() {
		cancel(&LimitError{What: fmt.Sprintf("still running after %s", opts.Limits.Time)})
	})
	defer s.finish()
	s.stdout = &outWriter{s: s}
	s.fs = newMemFS(opts.Image, s)
	for _, d := range opts.ImageDirs {
		s.fs.mkdirAll(path.Clean(d))
	}
	for _, st := range cloudInitOrder(parts) {
		s.mu.Lock()
		s.cur = slices.IndexFunc(s.parts, func(r PartReport) bool { return r.Part.Index == st.part.Index })
		if s.cur < 0 {
			s.parts = append(s.parts, PartReport{Part: st.part})
			s.cur = len(s.parts) - 1
		}
		s.mu.Unlock()
		if err := st.run(ctx, s); err != nil {
			return nil, err
		}
		if err := s.failed(); err != nil {
			return nil, err
		}
		if err := context.Cause(ctx); err != nil {
			return nil, err
		}
	}
	// Copies: a background job of the scripts may still be running.
	s.mu.Lock()
	defer s.mu.Unlock()
	ev := &Evaluation{Calls: slices.Clone(s.calls), NotSimulated: slices.Clone(s.notSim), Node: s.fs.nodeLocked()}
	for _, r := range s.parts {
		r.Notes = slices.Clone(r.Notes)
		ev.Parts = append(ev.Parts, r)
	}
	ev.Files = map[string]File{}
	for _, p := range s.fs.written {
		if f, ok := s.fs.files[p]; ok {
			ev.Files[p] = *f
			ev.Written = append(ev.Written, p)
		}
	}
	return ev, nil
}

// bootEnv is the environment cloud-init runs user-data scripts with.
var bootEnv = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LANG=C.UTF-8", "USER=root", "LOGNAME=root", "SHELL=/bin/bash", "TERM=dumb"}

// parseScript parses a script as bash. An output process substitution, >(...), is
// replaced by /dev/null (the classic `exec > >(tee log | logger)` only copies the
// output); an input one, <(...), runs first, its output in a simulated file named
// by the word (bash runs it alongside the reader, which sees the same bytes).
func parseScript(src []byte, name string) (*syntax.File, []string, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(bytes.NewReader(escapeBytes(src)), name)
	if err != nil {
		return nil, nil, err
	}
	lazyWords(f)
	literalEscapes(f)
	countLoops(f)
	deferTruncation(f)
	var bad error
	var dropped []string
	syntax.Walk(f, func(n syntax.Node) bool {
		w, ok := n.(*syntax.Word)
		if !ok || bad != nil {
			return bad == nil
		}
		for i, p := range w.Parts {
			ps, ok := p.(*syntax.ProcSubst)
			if !ok {
				continue
			}
			switch ps.Op {
			case syntax.CmdIn:
				// <(cmds) is $({ cmds; } | capture): the output, held in a simulated
				// file whose path is the word, as bash's /dev/fd/N.
				pos := ps.Pos()
				word := func(s string) *syntax.Word {
					return &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{ValuePos: pos, ValueEnd: pos, Value: s}}}
				}
				w.Parts[i] = &syntax.CmdSubst{Left: pos, Right: ps.End(), Stmts: []*syntax.Stmt{{Position: pos, Cmd: &syntax.BinaryCmd{
					OpPos: pos, Op: syntax.Pipe,
					X: &syntax.Stmt{Position: pos, Cmd: &syntax.Block{Lbrace: pos, Rbrace: ps.End(), Stmts: ps.Stmts}},
					Y: &syntax.Stmt{Position: pos, Cmd: &syntax.CallExpr{Args: []*syntax.Word{word(captureCmd)}}},
				}}}}
				continue
			case syntax.CmdOut:
			default:
				bad = fmt.Errorf("%s: process substitution %s...) is not simulated", ps.Pos(), ps.Op)
				return false
			}
			var b strings.Builder
			_ = syntax.NewPrinter(syntax.SingleLine(true)).Print(&b, &syntax.ProcSubst{Op: ps.Op, Stmts: ps.Stmts})
			dropped = append(dropped, strings.ReplaceAll(b.String(), deferMark, "")) // the script's text, not the parse tree's marks
			w.Parts[i] = &syntax.Lit{ValuePos: ps.Pos(), ValueEnd: ps.End(), Value: "/dev/null"}
		}
		return true
	})
	return f, dropped, bad
}

// parse is parseScript with the rewrites that keep the interpreter off the host
// (seal.go).
func (s *sim) parse(src []byte, name string) (*syntax.File, []string, error) {
	f, dropped, err := parseScript(src, name)
	if err != nil {
		return nil, nil, err
	}
	if err := sealTests(f, name); err != nil {
		return nil, nil, err
	}
	s.insertGuards(f)
	return f, dropped, nil
}

// literalEscapes works around the interpreter's keeping the backslash of an unquoted
// \c in the words it expands as one string (an assignment's value, ${X:-word},
// case's word, a redirection's file, [[ ]]'s operands): v='a'\”b' gave a\'b where
// bash gives a'b. Each \c becomes "c" (in double quotes, which it expands right).
func literalEscapes(f *syntax.File) {
	fix := func(w *syntax.Word) {
		if w == nil {
			return
		}
		var parts []syntax.WordPart
		changed := false
		for _, p := range w.Parts {
			l, ok := p.(*syntax.Lit)
			if !ok || !strings.Contains(l.Value, "\\") {
				parts = append(parts, p)
				continue
			}
			changed = true
			v, start := l.Value, 0
			for i := 0; i < len(v); i++ {
				if v[i] != '\\' || i+1 >= len(v) {
					continue
				}
				if start < i {
					parts = append(parts, &syntax.Lit{ValuePos: l.ValuePos, ValueEnd: l.ValueEnd, Value: v[start:i]})
				}
				if v[i+1] != '\n' {
					parts = append(parts, &syntax.DblQuoted{Left: l.ValuePos, Right: l.ValueEnd, Parts: []syntax.WordPart{
						&syntax.Lit{ValuePos: l.ValuePos, ValueEnd: l.ValueEnd, Value: escapeDQ(v[i+1 : i+2])},
					}})
				}
				i++
				start = i + 1
			}
			if start < len(v) {
				parts = append(parts, &syntax.Lit{ValuePos: l.ValuePos, ValueEnd: l.ValueEnd, Value: v[start:]})
			}
		}
		if changed {
			w.Parts = parts
		}
	}
	quoted := map[*syntax.ParamExp]bool{} // in double quotes, where \' stays \'
	mark := func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			return false
		case *syntax.ParamExp:
			quoted[n] = true
		}
		return true
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if dq, ok := n.(*syntax.DblQuoted); ok {
			for _, p := range dq.Parts {
				syntax.Walk(p, mark)
			}
		}
		return true
	})
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Assign:
			fix(n.Value)
		case *syntax.ParamExp:
			if n.Repl != nil {
				fix(n.Repl.With) // bash takes \' as ' there, quoted or not
			}
			if quoted[n] {
				return true
			}
			if n.Exp != nil && n.Exp.Op != syntax.RemSmallPrefix && n.Exp.Op != syntax.RemLargePrefix &&
				n.Exp.Op != syntax.RemSmallSuffix && n.Exp.Op != syntax.RemLargeSuffix && n.Exp.Op != syntax.OtherParamOps {
				fix(n.Exp.Word)
			}
		case *syntax.CaseClause:
			fix(n.Word)
		case *syntax.Redirect:
			if n.Op != syntax.Hdoc && n.Op != syntax.DashHdoc {
				fix(n.Word)
			}
		}
		return true
	})
}

// lazyWords works around the interpreter's expanding the word of ${X:+word} and
// ${X:-word} even when it is not used, which under set -u fails on an unset variable
// in it (eksctl's `${ENABLE_LOCAL_OUTPOST:+--enable-local-outpost "${ENABLE_LOCAL_OUTPOST}"}`)
// where bash does not: the plain references in such a word become ${Y-}. For the
// variable tested itself ($X in ${X:+... $X}) that is exact; for another variable
// it differs from bash only where bash would stop the script with "unbound
// variable" (docs/compat.md).
func lazyWords(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		pe, ok := n.(*syntax.ParamExp)
		if !ok || pe.Exp == nil || pe.Exp.Word == nil {
			return true
		}
		switch pe.Exp.Op {
		case syntax.AlternateUnset, syntax.AlternateUnsetOrNull, syntax.DefaultUnset, syntax.DefaultUnsetOrNull:
		default:
			return true
		}
		syntax.Walk(pe.Exp.Word, func(n syntax.Node) bool {
			in, ok := n.(*syntax.ParamExp)
			if !ok || in.Exp != nil || in.Slice != nil || in.Repl != nil || in.Length || in.Width || in.Excl || in.Index != nil || in.Names != 0 || in.Param == nil {
				return true
			}
			if v := in.Param.Value; v == "@" || v == "*" {
				return true
			}
			in.Short = false
			in.Exp = &syntax.Expansion{Op: syntax.DefaultUnset, Word: &syntax.Word{}}
			return true
		})
		return true
	})
}

// captureCmd stores its input in a simulated file and prints the file's path (the
// <(...) rewrite of parseScript).
const captureCmd = "eksboot-render-capture"

func (s *sim) capture(hc interp.HandlerContext) error {
	b, err := io.ReadAll(io.LimitReader(hc.Stdin, int64(s.opts.Limits.Output)+1))
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.pipes++
	p := fmt.Sprintf("/dev/fd/%d", 62+s.pipes)
	s.fs.mkdirAllLocked("/dev/fd")
	if err = s.fs.writeLocked(p, b, false, 0o600); err == nil {
		s.fs.written = slices.DeleteFunc(s.fs.written, func(w string) bool { return w == p })
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(hc.Stdout, p)
	return err
}

// stepCmd starts every loop body, so that a loop without commands ($((i++)),
// x=$x$x) still counts steps and has its variables' size checked.
const stepCmd = "eksboot-render-step"

func countLoops(f *syntax.File) {
	step := func(pos syntax.Pos) *syntax.Stmt {
		return &syntax.Stmt{Position: pos, Cmd: &syntax.CallExpr{Args: []*syntax.Word{{Parts: []syntax.WordPart{&syntax.Lit{ValuePos: pos, ValueEnd: pos, Value: stepCmd}}}}}}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch l := n.(type) {
		case *syntax.WhileClause:
			l.Do = append([]*syntax.Stmt{step(l.DoPos)}, l.Do...)
		case *syntax.ForClause:
			l.Do = append([]*syntax.Stmt{step(l.DoPos)}, l.Do...)
		}
		return true
	})
}

// runScript evaluates src as a script with the given arguments and environment,
// started by parent (nil for a part's).
func (s *sim) runScript(ctx context.Context, parent *scriptRun, where, name0 string, src []byte, args []string, env expand.Environ, dir string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	sc := &scriptRun{where: where, depth: 1}
	if parent != nil {
		sc.depth, sc.eksboot = parent.depth+1, parent.eksboot
	}
	if sc.depth > s.opts.Limits.Depth {
		return 0, s.stop(&LimitError{What: fmt.Sprintf("scripts started scripts more than %d deep", s.opts.Limits.Depth)})
	}
	f, dropped, err := s.parse(src, name0)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", where, err)
	}
	for _, d := range dropped {
		s.noteNotSimulated(shorten(d, 60) + " (its input is dropped)")
	}
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	r, err := interp.New(
		interp.Env(&nodeEnv{env: env, s: s}),
		func(r *interp.Runner) error { r.Dir = dir; return nil },
		interp.Params(append([]string{"--"}, args...)...),
		interp.StdIO(stdin, stdout, stderr),
		interp.OpenHandler(s.fs.open),
		interp.StatHandler(s.fs.stat),
		interp.AccessHandler(s.fs.access),
		interp.ReadDirHandler2(s.fs.readDir),
		interp.CallHandler(func(ctx context.Context, args []string) ([]string, error) { return s.call(ctx, sc, args) }),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
			return func(ctx context.Context, args []string) error { return s.exec(ctx, sc, args) }
		}),
	)
	if err != nil {
		return 0, err
	}
	err = r.Run(ctx, f)
	if err := s.failed(); err != nil {
		return 0, err
	}
	if cause := context.Cause(ctx); cause != nil {
		return 0, cause
	}
	var code interp.ExitStatus
	if errors.As(err, &code) {
		return int(code), nil
	}
	return 0, err
}

// call is the interpreter's CallHandler: it counts steps and keeps builtins that
// would look at the host's PATH (command -v, type, hash) on the simulated one. It
// runs once the command's words are expanded, where bash performs its redirections:
// the files its `>` opened are truncated now (deferTruncation).
func (s *sim) call(ctx context.Context, sc *scriptRun, args []string) ([]string, error) {
	hc := interp.HandlerCtx(ctx)
	for _, w := range []io.Writer{hc.Stdout, hc.Stderr} {
		if t, ok := w.(*truncFile); ok {
			if err := t.truncate(); err != nil {
				return nil, err
			}
		}
	}
	line := int(hc.Pos.Line())
	switch args[0] {
	case guardCmd:
		return args, s.guardStmt(hc, sc.where, args)
	case statusCmd:
		return args, nil
	}
	if err := s.checkNesting(args[0], sc.where, line); err != nil {
		return nil, err
	}
	params := 0
	for _, a := range args[1:] {
		params += len(a) + 1
	}
	s.mu.Lock()
	s.maxParams = max(s.maxParams, params)
	s.mu.Unlock()
	switch args[0] {
	case "echo":
		if err := s.produce(params+1, "echo", sc.where, line); err != nil {
			return nil, err
		}
	case "printf":
		a := args[1:]
		if len(a) > 1 && a[0] == "-v" {
			a = a[2:]
		}
		n := printfSize(a, s.opts.Limits.Expansion)
		if n < 0 {
			return nil, s.stop(&LimitError{What: fmt.Sprintf("a printf field wider than %d bytes (%s line %d)", s.opts.Limits.Expansion, sc.where, line)})
		}
		if err := s.produce(n, "printf", sc.where, line); err != nil {
			return nil, err
		}
	}
	if err := s.step(); err != nil {
		return nil, err
	}
	if args[0] == stepCmd {
		if err := s.checkVars(hc.Env, sc.where, line); err != nil {
			return nil, err
		}
		return []string{":"}, nil
	}
	args, err := s.routeCall(ctx, sc, args)
	if err != nil {
		return nil, err
	}
	switch {
	case args[0] == "command" && len(args) > 2 && (args[1] == "-v" || args[1] == "-V"),
		args[0] == "type" && len(args) > 1, args[0] == "hash" && len(args) > 1:
		return append([]string{lookPathCmd}, args...), nil
	}
	return args, nil
}

// step counts a command against Limits.Steps.
func (s *sim) step() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps++
	if s.steps > s.opts.Limits.Steps {
		return s.stopLocked(&LimitError{What: fmt.Sprintf("more than %d commands run", s.opts.Limits.Steps)})
	}
	return nil
}

const lookPathCmd = "eksboot-render-lookpath"

// exec is the interpreter's ExecHandler: nothing runs on the host.
func (s *sim) exec(ctx context.Context, sc *scriptRun, args []string) error {
	hc := interp.HandlerCtx(ctx)
	name := args[0]
	line := int(hc.Pos.Line())
	at := fmt.Sprintf("%s line %d", sc.where, line)
	switch name {
	case lookPathCmd:
		return s.lookPath(hc, args[1:])
	case captureCmd:
		return s.capture(hc)
	case efCmd:
		return s.ef(hc, args[1:])
	case guardCmd:
		code, _ := strconv.Atoi(args[2])
		return interp.ExitStatus(uint8(code))
	case statusCmd:
		return nil
	case failCmd:
		fmt.Fprintln(hc.Stderr, args[1])
		code, _ := strconv.Atoi(args[2])
		return interp.ExitStatus(uint8(code))
	}
	p := ""
	if strings.Contains(name, "/") {
		p = abs(hc.Dir, name)
	} else {
		p = s.findInPath(hc, name)
	}
	switch {
	case p == BootstrapPath:
		return s.bootstrap(ctx, sc, hc, at, line, args[1:])
	case p == EksbootPath || name == "eksboot":
		if sc.eksboot != nil && len(args) > 1 && args[1] == "bootstrap" {
			words, env := unescapeAll(args[2:]), environMap(hc.Env)
			s.mu.Lock()
			*sc.eksboot = eksbootCall{ran: true, args: words, env: env}
			s.mu.Unlock()
			return nil
		}
		s.noteNotSimulated("eksboot " + strings.Join(args[1:min(2, len(args))], ""))
		return nil
	}
	if f, ok := s.fs.file(p); ok && p != "" && !isToolPath(p) {
		if f.Mode&0o111 == 0 {
			fmt.Fprintf(hc.Stderr, "%s: Permission denied\n", name)
			return interp.ExitStatus(126)
		}
		return s.runFile(ctx, sc, hc, at+": "+p, name, f.Data, args[1:])
	}
	base := path.Base(name)
	if base == "bash" || base == "sh" {
		return s.shell(ctx, sc, hc, at, args[1:])
	}
	if t, ok := tools()[base]; ok {
		return t(&toolCtx{s: s, sc: sc, hc: hc, ctx: ctx, name: base, at: at}, args[1:])
	}
	s.noteNotSimulated(base)
	if hc.Stdout != s.stdout {
		fmt.Fprint(hc.Stdout, s.unknown(fmt.Sprintf("the output of %s (%s)", quoteArgs(args, 60), at)))
	}
	return nil
}

// isToolPath: a simulated tool's own path (/usr/bin/cat) runs the tool, not a file.
func isToolPath(p string) bool {
	_, ok := tools()[path.Base(p)]
	return ok && (path.Dir(p) == "/usr/bin" || path.Dir(p) == "/bin")
}

// findInPath finds name in the simulated node's PATH: a file the user data or the
// image has.
func (s *sim) findInPath(hc interp.HandlerContext, name string) string {
	for _, d := range strings.Split(hc.Env.Get("PATH").String(), ":") {
		if d == "" {
			continue
		}
		p := path.Join(abs(hc.Dir, d), name)
		if s.fs.isFile(p) {
			return p
		}
	}
	return ""
}

func (s *sim) lookPath(hc interp.HandlerContext, args []string) error {
	cmd, names := args[0], args[1:]
	for len(names) > 0 && strings.HasPrefix(names[0], "-") {
		names = names[1:]
	}
	status := 0
	for _, n := range names {
		p := n
		switch {
		case interp.IsBuiltin(n):
		case strings.Contains(n, "/"):
			if !s.fs.isFile(abs(hc.Dir, n)) {
				status = 1
				continue
			}
		default:
			if p = s.findInPath(hc, n); p == "" {
				if _, ok := tools()[n]; ok || n == "bash" || n == "sh" {
					p = "/usr/bin/" + n
				} else {
					s.noteNotSimulated(cmd + " " + n)
					p = "/usr/bin/" + n // an image program render cannot see: assumed present
				}
			}
		}
		if cmd != "hash" {
			fmt.Fprintln(hc.Stdout, p)
		}
	}
	if status != 0 {
		return interp.ExitStatus(uint8(status))
	}
	return nil
}

// bootstrap captures a bootstrap.sh call and runs the image's shim, which ends in
// `exec eksboot bootstrap ...`.
func (s *sim) bootstrap(ctx context.Context, sc *scriptRun, hc interp.HandlerContext, at string, line int, args []string) error {
	c := Call{Part: s.part(), Where: at, Line: line, Args: unescapeAll(args), Env: environMap(hc.Env), Node: s.fs.node()}
	if shim, ok := s.fs.file(BootstrapPath); ok {
		parent := *sc
		parent.eksboot = &eksbootCall{}
		code, err := s.runScript(ctx, &parent, at+": "+BootstrapPath, BootstrapPath, shim.Data, args, hc.Env, hc.Dir, nil, hc.Stdout, hc.Stderr)
		if err != nil {
			return err
		}
		s.mu.Lock()
		got := *parent.eksboot
		s.mu.Unlock()
		if !got.ran {
			s.note("%s: bootstrap.sh (as edited by the user data) exited %d without running eksboot", at, code)
			c.Eksboot = nil
		} else {
			c.Eksboot = got.args
			c.Env = got.env
		}
	} else {
		c.Eksboot = c.Args
	}
	c.Unknown = s.reasons(append(append([]string{}, c.Args...), c.Eksboot...))
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.mu.Unlock()
	s.note("%s: calls bootstrap.sh", at)
	if s.opts.Bootstrap == nil || c.Eksboot == nil || len(c.Unknown) > 0 {
		return nil
	}
	files, ran, err := s.runBootstrap(ctx, c)
	if !ran {
		return context.Cause(ctx) // the bound was hit just now
	}
	if err != nil {
		return s.stop(err)
	}
	s.fs.install(files)
	return nil
}

// runBootstrap calls opts.Bootstrap, one call at a time, with the wall-time bound
// stopped; ran is false when the bound was hit already.
func (s *sim) runBootstrap(ctx context.Context, c Call) (_ map[string]File, ran bool, _ error) {
	s.bootMu.Lock()
	defer s.bootMu.Unlock()
	if s.finished || !s.timer.Stop() {
		return nil, false, nil
	}
	s.left -= time.Since(s.started)
	files, err := s.opts.Bootstrap(ctx, c)
	s.started = time.Now()
	s.timer.Reset(max(s.left, 0))
	return files, true, err
}

// runFile runs a script file of the simulated node (its #! decides the shell; other
// interpreters are not simulated).
func (s *sim) runFile(ctx context.Context, sc *scriptRun, hc interp.HandlerContext, where, name0 string, src []byte, args []string) error {
	first, _, _ := strings.Cut(string(src), "\n")
	if strings.HasPrefix(first, "#!") && !isShellLine(first) {
		s.noteNotSimulated(strings.TrimSpace(strings.TrimPrefix(first, "#!")))
		return nil
	}
	code, err := s.runScript(ctx, sc, where, name0, src, args, exported(hc.Env), hc.Dir, hc.Stdin, hc.Stdout, hc.Stderr)
	if err != nil {
		return err
	}
	if code != 0 {
		s.note("%s exits with status %d%s", where, code, s.stdout.lastOutput())
		return interp.ExitStatus(uint8(code))
	}
	return nil
}

var shellLineRE lazy[*regexp.Regexp]

func shellLine() *regexp.Regexp {
	return shellLineRE.get(func() *regexp.Regexp {
		return regexp.MustCompile(`^#!\s*(/usr)?/bin/(env\s+)?(ba)?sh(\s|$)`)
	})
}

func isShellLine(s string) bool { return shellLine().MatchString(strings.TrimRight(s, "\r")) }

// shell runs `bash -c '...' [name args]`, `bash file args` or `bash -s` / `bash`
// reading the script from its standard input.
func (s *sim) shell(ctx context.Context, sc *scriptRun, hc interp.HandlerContext, at string, args []string) error {
	var opts []string
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-c" && args[0] != "-s" && args[0] != "--" {
		opts = append(opts, args[0])
		args = args[1:]
	}
	var src []byte
	var where string
	name0 := "bash"
	switch {
	case len(args) > 0 && args[0] == "-c":
		if len(args) < 2 {
			fmt.Fprintln(hc.Stderr, "bash: -c: option requires an argument")
			return interp.ExitStatus(2)
		}
		src, args = []byte(args[1]), args[2:]
		if len(args) > 0 {
			name0, args = args[0], args[1:]
		}
		where = at + ": bash -c"
	case len(args) == 0 || args[0] == "-s":
		if len(args) > 0 {
			args = args[1:]
		}
		b, err := io.ReadAll(io.LimitReader(hc.Stdin, int64(userdata.MaxDecoded)))
		if err != nil {
			return err
		}
		src, where = b, at+": bash reading its input"
	default:
		if args[0] == "--" {
			args = args[1:]
		}
		if len(args) == 0 {
			return nil
		}
		p := abs(hc.Dir, args[0])
		b, ok := s.fs.read(p)
		if !ok {
			fmt.Fprintf(hc.Stderr, "bash: %s: No such file or directory\n", args[0])
			return interp.ExitStatus(127)
		}
		src, args, where, name0 = b, args[1:], at+": "+p, args[0]
	}
	prefix := ""
	for _, o := range opts {
		if o == "-e" || o == "-x" || o == "-u" || o == "-eu" || o == "-ex" || o == "-xe" || o == "-eux" || o == "-euxo" {
			prefix += "set " + o + "\n"
		}
	}
	code, err := s.runScript(ctx, sc, where, name0, append([]byte(prefix), src...), args, exported(hc.Env), hc.Dir, hc.Stdin, hc.Stdout, hc.Stderr)
	if err != nil {
		return err
	}
	if code != 0 {
		return interp.ExitStatus(uint8(code))
	}
	return nil
}

// exported is the environment a started program gets.
func exported(env expand.Environ) expand.Environ {
	var pairs []string
	env.Each(func(name string, vr expand.Variable) bool {
		if vr.Exported && vr.IsSet() {
			pairs = append(pairs, name+"="+vr.String())
		}
		return true
	})
	return expand.ListEnviron(pairs...)
}

func environMap(env expand.Environ) map[string]string {
	m := map[string]string{}
	env.Each(func(name string, vr expand.Variable) bool {
		if vr.Exported && vr.IsSet() {
			m[name] = unescapeBytes(vr.String())
		}
		return true
	})
	return m
}

// shorten is s for messages, cut to at most n bytes at a character's start.
func shorten(s string, n int) string {
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		return s[:n] + "…"
	}
	return s
}

// quoteArgs is a command line for messages, at most n bytes.
func quoteArgs(args []string, n int) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			q = strconv.Quote(a)
		}
		b.WriteString(q)
	}
	return shorten(b.String(), n)
}

// outWriter is the scripts' own standard output and error: counted, then dropped.
type outWriter struct {
	s    *sim
	last []byte // the end of what was written, for messages
}

func (w *outWriter) Write(b []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if err := w.s.spendLocked(len(b)); err != nil {
		return 0, err
	}
	w.last = append(w.last, b...)
	if len(w.last) > 4096 {
		w.last = w.last[len(w.last)-4096:]
	}
	return len(b), nil
}

// lastOutput is "; its last output: LINE" with the last line written, for
// messages, or nothing.
func (w *outWriter) lastOutput() string {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	ls := strings.Split(strings.TrimRight(string(w.last), "\n"), "\n")
	if l := ls[len(ls)-1]; l != "" {
		return "; its last output: " + shorten(l, 200)
	}
	return ""
}
