package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// The interpreter (mvdan.cc/sh/v3/interp) has paths to the host that its handlers
// do not see; each is closed here or refused by name:
//   - files named sh-interp-* in its temporary directory (the FIFOs of process
//     substitution) are opened with os.OpenFile, not the OpenHandler, and process
//     substitution makes them with mkfifo: the temporary directory is sealedTempDir,
//     a path with a NUL byte that the kernel is never asked for (Go refuses it), and
//     process substitution is rewritten before the interpreter sees it, in scripts,
//     eval, source and trap alike (routeCall);
//   - source and . look the file up with os.Stat: the file is read here, from the
//     simulated node, and handed over under a sealed path (memFS.hidden);
//   - pwd -P follows the host's symlinks (filepath.EvalSymlinks): the node's file
//     system has none, so it is pwd;
//   - ~user looks the user up in the host's /etc/passwd (os/user): nodeEnv answers
//     from the node's user database (the image's /etc/passwd, or nodeUsers);
//   - test -O and -G compare with the host's user (os/user) and a syscall.Stat_t
//     (a panic on the simulated files): every file of the node is root's, so they are
//     -e; -ef compares the simulated paths; -nt, -ot and -N need file times, which
//     the simulated node does not keep: refused.
//
// Environment and working directory are always given (interp.Env(nil) and
// interp.Dir("") would read the host's), and programs run by the ExecHandler only.

// sealedTempDir is the interpreter's temporary directory: a path the kernel is never
// asked for (Go refuses a NUL byte in a path before any system call).
const sealedTempDir = "/\x00eksboot-render-sealed"

// nodeUsers is the user database of an EKS node image (Amazon Linux 2023) when the
// image given has no /etc/passwd: name -> home directory (built on first use, see lazy).
func nodeUsers() map[string]string {
	return nodeUserTable.get(func() map[string]string {
		return map[string]string{
			"root": "/root", "bin": "/bin", "daemon": "/sbin", "adm": "/var/adm", "lp": "/var/spool/lpd",
			"sync": "/sbin", "shutdown": "/sbin", "halt": "/sbin", "mail": "/var/spool/mail", "operator": "/root",
			"games": "/usr/games", "ftp": "/var/ftp", "nobody": "/", "dbus": "/", "systemd-network": "/",
			"systemd-resolve": "/", "systemd-oom": "/", "systemd-coredump": "/", "tss": "/dev/null",
			"chrony": "/var/lib/chrony", "sshd": "/usr/share/empty.sshd", "rpc": "/var/lib/rpcbind",
			"libstoragemgmt": "/", "ec2-instance-connect": "/home/ec2-instance-connect", "ec2-user": "/home/ec2-user",
		}
	})
}

var nodeUserTable lazy[map[string]string]

// nodeEnv is the environment the interpreter starts from: env, with TMPDIR sealed
// for the interpreter's own use (once, when it resets; the script sees env's) and
// ~user answered from the node's user database.
type nodeEnv struct {
	env    expand.Environ
	s      *sim
	sealed bool
}

func (e *nodeEnv) Get(name string) expand.Variable {
	if name == "TMPDIR" && !e.sealed {
		e.sealed = true // the interpreter's reset reads it first, before any script
		return expand.Variable{Set: true, Kind: expand.String, Str: sealedTempDir}
	}
	if user, ok := strings.CutPrefix(name, "HOME "); ok {
		home, ok := e.s.home(user)
		if !ok {
			home = "~" + user // bash leaves ~user of an unknown user as it is
		}
		return expand.Variable{Set: true, Kind: expand.String, Str: home}
	}
	return e.env.Get(name)
}

func (e *nodeEnv) Each(f func(string, expand.Variable) bool) { e.env.Each(f) }

// home is the home directory of user on the simulated node.
func (s *sim) home(user string) (string, bool) {
	if b, ok := s.fs.read("/etc/passwd"); ok {
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Split(l, ":")
			if len(f) >= 6 && f[0] == user {
				return f[5], true
			}
		}
		return "", false
	}
	h, ok := nodeUsers()[user]
	return h, ok
}

// NotSimulatedError says the user data uses a construct render does not simulate; it
// names it and its line, rather than guess.
type NotSimulatedError struct {
	Where string // "part 1 (text/x-shellscript) line 3"
	What  string // "test -nt (file times)"
}

func (e *NotSimulatedError) Error() string {
	return fmt.Sprintf("%s: %s is not simulated; render refuses it rather than guess what bash would do", e.Where, e.What)
}

func (s *sim) refuse(hc interp.HandlerContext, where, what string) error {
	return s.stop(&NotSimulatedError{Where: fmt.Sprintf("%s line %d", where, hc.Pos.Line()), What: what})
}

// refuseTool stops the evaluation: the program's call is not simulated.
func (s *sim) refuseTool(t *toolCtx, what string) error {
	return s.stop(&NotSimulatedError{Where: t.at, What: what})
}

// failCmd prints its first argument to standard error and exits with the second.
const failCmd = "eksboot-render-fail"

// efCmd prints 1 when its two paths name the same existing file of the node, else 0
// (the [[ X -ef Y ]] rewrite of sealTests).
const efCmd = "eksboot-render-ef"

// routeCall rewrites, before the interpreter runs it, a builtin call that would
// reach the host or parse code the rewrites of parseScript did not see.
func (s *sim) routeCall(ctx context.Context, sc *scriptRun, args []string) ([]string, error) {
	hc := interp.HandlerCtx(ctx)
	for len(args) > 1 && (args[0] == "builtin" || args[0] == "command") && isRouted(args[1]) {
		args = args[1:]
	}
	switch args[0] {
	case "eval":
		src := strings.Join(args[1:], " ")
		out, err := s.rewrite(src, "eval")
		var ns *NotSimulatedError
		if errors.As(err, &ns) {
			return nil, s.stop(fmt.Errorf("%s line %d: eval: %w", sc.where, hc.Pos.Line(), err))
		} else if err != nil {
			return args, nil // the interpreter reports the syntax error
		}
		return []string{"eval", out}, nil
	case "source", ".":
		if len(args) < 2 {
			return args, nil
		}
		p, ok := s.sourcePath(hc, args[1])
		if !ok {
			return []string{failCmd, fmt.Sprintf("%s: %s: No such file or directory", args[0], args[1]), "1"}, nil
		}
		b, _ := s.fs.read(p)
		out, err := s.rewrite(string(b), p)
		if err != nil {
			return nil, s.stop(fmt.Errorf("%s line %d: %s: %w", sc.where, hc.Pos.Line(), args[0], err))
		}
		return append([]string{args[0], s.fs.hide(out)}, args[2:]...), nil
	case "trap":
		i := 1
		if i < len(args) && args[i] == "--" {
			i++
		}
		if i+1 < len(args) && !strings.HasPrefix(args[i], "-") {
			out, err := s.rewrite(args[i], "trap")
			var ns *NotSimulatedError
			if errors.As(err, &ns) {
				return nil, s.stop(fmt.Errorf("%s line %d: trap: %w", sc.where, hc.Pos.Line(), err))
			} else if err != nil {
				return args, nil
			}
			args = append(append(append([]string{}, args[:i]...), out), args[i+1:]...)
		}
		return args, nil
	case "pwd":
		return slicesDelete(args, "-P", "-L"), nil
	case "cd":
		return slicesDelete(args, "-P", "-L"), nil
	case "[", "test":
		return s.routeTest(hc, sc.where, args)
	case "printf":
		if len(args) > 1 && args[1] == "--" {
			args = append([]string{"printf"}, args[2:]...)
		}
		if len(args) > 3 && args[1] == "-v" {
			return s.printfV(args)
		}
	}
	return args, nil
}

var printfNameRE lazy[*regexp.Regexp]

func printfName() *regexp.Regexp {
	return printfNameRE.get(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?$`) })
}

// printfV runs `printf -v NAME FORMAT ARGS...`, which the interpreter lacks: the
// output, formatted as its printf would, is assigned by eval (so that a local NAME
// stays local, as in bash).
func (s *sim) printfV(args []string) ([]string, error) {
	name, format, rest := args[2], args[3], args[4:]
	if rest2 := args[3:]; format == "--" && len(rest2) > 1 {
		format, rest = rest2[1], rest2[2:]
	}
	if !printfName().MatchString(name) {
		return []string{failCmd, fmt.Sprintf("printf: `%s': not a valid identifier", name), "2"}, nil
	}
	var b strings.Builder
	for {
		out, n, err := expand.Format(nil, format, rest)
		if err != nil {
			return []string{failCmd, "printf: " + err.Error(), "1"}, nil
		}
		b.WriteString(out)
		rest = rest[n:]
		if n == 0 || len(rest) == 0 {
			break
		}
	}
	return []string{"eval", name + "=" + quoteBytes(b.String())}, nil
}

// quoteBytes is s as one bash word, byte for byte: $'...' with every byte but
// letters and digits escaped.
func quoteBytes(s string) string {
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '=' || c == ',' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "\\x%02x", c)
		}
	}
	b.WriteString("'")
	return b.String()
}

// escapeBytes makes a script valid UTF-8 for the parser, as bash reads bytes: a
// byte that is not part of a UTF-8 character (a Latin-1 é) becomes the private-use
// character U+F700+byte, which unescapeBytes turns back into the byte wherever a
// value leaves the interpreter (bootstrap.sh's words, files written).
func escapeBytes(src []byte) []byte {
	if utf8.Valid(src) {
		return src
	}
	out := make([]byte, 0, len(src)+16)
	for len(src) > 0 {
		r, n := utf8.DecodeRune(src)
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, 0xF700+rune(src[0]))
		} else {
			out = append(out, src[:n]...)
		}
		src = src[n:]
	}
	return out
}

func unescapeBytes(s string) string {
	if !hasEscaped(s) {
		return s
	}
	b := make([]byte, 0, len(s))
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if r >= 0xF780 && r <= 0xF7FF {
			b = append(b, byte(r-0xF700))
		} else {
			b = append(b, s[:n]...)
		}
		s = s[n:]
	}
	return string(b)
}

func hasEscaped(s string) bool {
	for _, r := range s {
		if r >= 0xF780 && r <= 0xF7FF {
			return true
		}
	}
	return false
}

func unescapeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = unescapeBytes(s)
	}
	return out
}

func isRouted(name string) bool {
	switch name {
	case "eval", "source", ".", "trap", "pwd", "cd", "[", "test":
		return true
	}
	return false
}

// slicesDelete drops the leading options of args[1:] that are in drop.
func slicesDelete(args []string, drop ...string) []string {
	out := []string{args[0]}
	i := 1
	for ; i < len(args) && (args[i] == drop[0] || args[i] == drop[1]); i++ {
	}
	return append(out, args[i:]...)
}

// sourcePath finds the file of `source name` as bash does: a name with a slash as it
// is, else in PATH, then in the working directory.
func (s *sim) sourcePath(hc interp.HandlerContext, name string) (string, bool) {
	if !strings.Contains(name, "/") {
		if p := s.findInPath(hc, name); p != "" {
			return p, true
		}
	}
	p := abs(hc.Dir, name)
	return p, s.fs.isFile(p)
}

// rewrite parses src as parseScript does and prints it again, for the interpreter to
// parse at run time (eval, source, trap).
func (s *sim) rewrite(src, name string) (string, error) {
	f, _, err := s.parse([]byte(src), name)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := syntax.NewPrinter().Print(&b, f); err != nil {
		return "", err
	}
	return b.String(), nil
}

// routeTest rewrites the operators of test and [ that would reach the host.
func (s *sim) routeTest(hc interp.HandlerContext, where string, args []string) ([]string, error) {
	end := len(args)
	if args[0] == "[" && end > 1 && args[end-1] == "]" {
		end--
	}
	out := append([]string{}, args...)
	for i := 1; i < end; i++ {
		unary := i == 1 || out[i-1] == "!" || out[i-1] == "-a" || out[i-1] == "-o" || out[i-1] == "("
		switch a := args[i]; {
		case (a == "-O" || a == "-G") && unary && i+1 < end:
			out[i] = "-e"
		case a == "-N" && unary && i+1 < end:
			return nil, s.refuse(hc, where, "test -N (file times)")
		case (a == "-nt" || a == "-ot") && i > 1 && i+1 < end:
			return nil, s.refuse(hc, where, "test "+a+" (file times)")
		case a == "-ef" && i > 1 && i+1 < end:
			out[i-1], out[i], out[i+1] = "1", "=", s.sameFile(hc.Dir, args[i-1], args[i+1])
		}
	}
	return out, nil
}

func (s *sim) sameFile(dir, a, b string) string {
	pa, pb := abs(dir, a), abs(dir, b)
	if pa == pb && (s.fs.isFile(pa) || s.fs.isDir(pa)) {
		return "1"
	}
	return "0"
}

func (s *sim) ef(hc interp.HandlerContext, args []string) error {
	if len(args) != 2 {
		return interp.ExitStatus(2)
	}
	_, err := fmt.Fprint(hc.Stdout, s.sameFile(hc.Dir, args[0], args[1]))
	return err
}

// sealTests rewrites the [[ ]] operators that would reach the host (see routeTest);
// -nt, -ot and -N are refused.
func sealTests(f *syntax.File, name string) error {
	var bad error
	syntax.Walk(f, func(n syntax.Node) bool {
		if bad != nil {
			return false
		}
		tc, ok := n.(*syntax.TestClause)
		if !ok {
			return true
		}
		tc.X = sealTest(tc.X, name, &bad)
		return false
	})
	return bad
}

func sealTest(x syntax.TestExpr, name string, bad *error) syntax.TestExpr {
	refuse := func(pos syntax.Pos, what string) {
		*bad = &NotSimulatedError{Where: fmt.Sprintf("%s line %d", name, pos.Line()), What: what}
	}
	switch e := x.(type) {
	case *syntax.UnaryTest:
		switch e.Op {
		case syntax.TsUsrOwn, syntax.TsGrpOwn:
			e.Op = syntax.TsExists
		case syntax.TsModif:
			refuse(e.OpPos, "[[ -N ]] (file times)")
		default:
			e.X = sealTest(e.X, name, bad)
		}
	case *syntax.BinaryTest:
		switch e.Op {
		case syntax.TsNewer, syntax.TsOlder:
			refuse(e.OpPos, fmt.Sprintf("[[ %s ]] (file times)", e.Op))
		case syntax.TsDevIno:
			xw, _ := e.X.(*syntax.Word)
			yw, _ := e.Y.(*syntax.Word)
			if xw == nil || yw == nil {
				refuse(e.OpPos, "[[ -ef ]] of that form")
				return x
			}
			pos := e.OpPos
			sub := &syntax.CmdSubst{Left: pos, Right: pos, Stmts: []*syntax.Stmt{{Position: pos, Cmd: &syntax.CallExpr{
				Args: []*syntax.Word{litWord(pos, efCmd), dq(xw), dq(yw)},
			}}}}
			return &syntax.BinaryTest{OpPos: pos, Op: syntax.TsMatch, X: &syntax.Word{Parts: []syntax.WordPart{sub}}, Y: litWord(pos, "1")}
		default:
			e.X, e.Y = sealTest(e.X, name, bad), sealTest(e.Y, name, bad)
		}
	case *syntax.ParenTest:
		e.X = sealTest(e.X, name, bad)
	}
	return x
}

func litWord(pos syntax.Pos, s string) *syntax.Word {
	return &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{ValuePos: pos, ValueEnd: pos, Value: s}}}
}

// dq is w in double quotes (w as one word, as [[ ]] takes its operands).
func dq(w *syntax.Word) *syntax.Word {
	if len(w.Parts) == 1 {
		if _, ok := w.Parts[0].(*syntax.DblQuoted); ok {
			return w
		}
	}
	return &syntax.Word{Parts: []syntax.WordPart{&syntax.DblQuoted{Left: w.Pos(), Right: w.End(), Parts: dqParts(w.Parts)}}}
}

// dqParts are parts that mean the same inside double quotes: single-quoted text and
// literal text become literal; other parts stay.
func dqParts(ps []syntax.WordPart) []syntax.WordPart {
	var out []syntax.WordPart
	for _, p := range ps {
		switch p := p.(type) {
		case *syntax.SglQuoted:
			out = append(out, &syntax.Lit{ValuePos: p.Pos(), ValueEnd: p.End(), Value: escapeDQ(p.Value)})
		case *syntax.Lit:
			out = append(out, &syntax.Lit{ValuePos: p.Pos(), ValueEnd: p.End(), Value: escapeDQ(unescapeLit(p.Value))})
		case *syntax.DblQuoted:
			out = append(out, p.Parts...)
		default:
			out = append(out, p)
		}
	}
	return out
}

func escapeDQ(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`, "`", "\\`")
	return r.Replace(s)
}

// unescapeLit drops the backslashes of an unquoted literal (a\ b is "a b").
func unescapeLit(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// hide stores src, a script to hand to the interpreter's source, under a sealed path
// it opens through memFS.open (and the host refuses, should it stat it).
func (m *memFS) hide(src string) string {
	m.sim.mu.Lock()
	defer m.sim.mu.Unlock()
	if m.hidden == nil {
		m.hidden = map[string]string{}
	}
	p := path.Join(sealedTempDir, fmt.Sprintf("source-%d", len(m.hidden)+1))
	m.hidden[p] = src
	return p
}

// hiddenScript is the script hide stored under p.
func (m *memFS) hiddenScript(p string) (string, bool) {
	m.sim.mu.Lock()
	defer m.sim.mu.Unlock()
	src, ok := m.hidden[p]
	return src, ok
}
