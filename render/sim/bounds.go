package sim

import (
	"fmt"
	"math"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// The bounds that keep an evaluation's memory small are checked before the memory
// is taken: a statement's words are measured (from the sizes of the variables they
// name, as they are when the statement starts) by a guard run before it, so
// x=$x$x, ${x//0/$x} or a brace expansion never builds a string or a list larger
// than Limits.Expansion; the variables together hold at most Limits.Vars; commands
// produce at most Limits.Data bytes in all (into pipes and substitutions); the
// interpreter's nesting (functions, source, eval) and its concurrent pipelines and
// background jobs are counted at every command.

// guardCmd measures the statement registered under its first argument and exits
// with its second (the status before it, which the statement may read as $?).
const guardCmd = "eksboot-render-guard"

// statusCmd exits 0 (the right side of the guard's `guard N "$?" && status`, a
// list whose failure does not trip set -e or an ERR trap).
const statusCmd = "eksboot-render-status"

// insertGuards puts a guard before every statement of f whose words expand.
func (s *sim) insertGuards(f *syntax.File) {
	s.mu.Lock()
	defer s.mu.Unlock()
	guard := func(st *syntax.Stmt) *syntax.Stmt {
		pos := st.Pos()
		s.guards = append(s.guards, st)
		status := &syntax.Word{Parts: []syntax.WordPart{&syntax.DblQuoted{Left: pos, Right: pos, Parts: []syntax.WordPart{
			&syntax.ParamExp{Dollar: pos, Short: true, Param: &syntax.Lit{ValuePos: pos, ValueEnd: pos, Value: "?"}},
		}}}}
		return &syntax.Stmt{Position: pos, Cmd: &syntax.BinaryCmd{
			OpPos: pos, Op: syntax.AndStmt,
			X: &syntax.Stmt{Position: pos, Cmd: &syntax.CallExpr{Args: []*syntax.Word{litWord(pos, guardCmd), litWord(pos, strconv.Itoa(len(s.guards)-1)), status}}},
			Y: &syntax.Stmt{Position: pos, Cmd: &syntax.CallExpr{Args: []*syntax.Word{litWord(pos, statusCmd)}}},
		}}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if fd, ok := n.(*syntax.FuncDecl); ok && fd.Name != nil {
			if s.funcs == nil {
				s.funcs = map[string]bool{}
			}
			s.funcs[fd.Name.Value] = true
		}
		return true
	})
	list := func(sts []*syntax.Stmt) []*syntax.Stmt {
		out := make([]*syntax.Stmt, 0, 2*len(sts))
		for _, st := range sts {
			if expands(st) {
				out = append(out, guard(st))
			}
			out = append(out, st)
		}
		return out
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.File:
			n.Stmts = list(n.Stmts)
		case *syntax.Block:
			n.Stmts = list(n.Stmts)
		case *syntax.Subshell:
			n.Stmts = list(n.Stmts)
		case *syntax.IfClause:
			n.Cond, n.Then = list(n.Cond), list(n.Then)
		case *syntax.WhileClause:
			n.Cond, n.Do = list(n.Cond), list(n.Do)
		case *syntax.ForClause:
			n.Do = list(n.Do)
		case *syntax.CaseClause:
			for _, it := range n.Items {
				it.Stmts = list(it.Stmts)
			}
		case *syntax.CmdSubst:
			n.Stmts = list(n.Stmts)
		case *syntax.ProcSubst:
			n.Stmts = list(n.Stmts)
		}
		return true
	})
}

// ownNodes calls f on the nodes of st that its own expansion evaluates: not those of
// the statement lists under it (they have their own guards).
func ownNodes(st *syntax.Stmt, f func(syntax.Node), words func(*syntax.Word)) {
	syntax.Walk(st, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Block, *syntax.Subshell, *syntax.IfClause, *syntax.WhileClause, *syntax.CmdSubst, *syntax.ProcSubst, *syntax.FuncDecl:
			return false
		case *syntax.ForClause:
			if wi, ok := n.Loop.(*syntax.WordIter); ok {
				for _, w := range wi.Items {
					words(w)
				}
			}
			return false
		case *syntax.CaseClause:
			words(n.Word)
			for _, it := range n.Items {
				for _, p := range it.Patterns {
					words(p)
				}
			}
			return false
		}
		f(n)
		return true
	})
}

func expands(st *syntax.Stmt) bool {
	found := false
	ownNodes(st, func(n syntax.Node) {
		switch n := n.(type) {
		case *syntax.ParamExp:
			found = true
		case *syntax.Lit:
			found = found || strings.Contains(n.Value, "{")
		case *syntax.Redirect:
			found = found || n.Hdoc != nil
		}
	}, func(*syntax.Word) { found = true })
	return found
}

// measure is one guard's work: the largest the statement's expansions can be, from
// the variables' sizes now.
type measure struct {
	params  float64 // sim.maxParams when the guard runs
	env     expand.Environ
	assumed map[string]float64 // sizes after the statement's own assignments
	maxVar  float64
	names   float64
	scanned bool
}

func (s *sim) guardStmt(hc interp.HandlerContext, where string, args []string) error {
	n, err := strconv.Atoi(args[1])
	s.mu.Lock()
	var st *syntax.Stmt
	if err == nil && n >= 0 && n < len(s.guards) {
		st = s.guards[n]
	}
	params := s.maxParams
	s.mu.Unlock()
	if st == nil {
		return nil
	}
	if err := s.checkVars(hc.Env, where, int(hc.Pos.Line())); err != nil {
		return err
	}
	m := &measure{params: float64(params), env: hc.Env, assumed: map[string]float64{}}
	total := 0.0
	ownNodes(st, func(n syntax.Node) {
		switch n := n.(type) {
		case *syntax.Assign:
			v := 0.0
			if n.Value != nil {
				v = m.word(n.Value)
			}
			if n.Array != nil {
				for _, e := range n.Array.Elems {
					if e.Value != nil {
						v += m.word(e.Value) + 1
					}
				}
			}
			total += v
			if n.Name != nil {
				if n.Append || n.Index != nil {
					v += m.size(n.Name.Value)
				}
				m.assumed[n.Name.Value] = v
			}
		case *syntax.CallExpr:
			for _, w := range n.Args {
				total += m.word(w)
			}
		case *syntax.Redirect:
			if n.Word != nil {
				total += m.word(n.Word)
			}
			if n.Hdoc != nil {
				total += m.word(n.Hdoc)
			}
		case *syntax.TestClause:
			syntax.Walk(n.X, func(n syntax.Node) bool {
				if w, ok := n.(*syntax.Word); ok {
					total += m.word(w)
					return false
				}
				return true
			})
		}
	}, func(w *syntax.Word) { total += m.word(w) })
	if lim := float64(s.opts.Limits.Expansion); total > lim {
		return s.stop(&LimitError{What: fmt.Sprintf("a statement expanding to more than %d bytes (%s line %d)", s.opts.Limits.Expansion, where, hc.Pos.Line())})
	}
	return nil
}

// size is the most bytes the variable name expands to.
func (m *measure) size(name string) float64 {
	if v, ok := m.assumed[name]; ok {
		return v
	}
	switch name {
	case "@", "*":
		return m.params
	case "?", "#", "$", "!", "-", "LINENO", "RANDOM", "SECONDS", "PPID", "EPOCHSECONDS":
		return 20
	}
	if name[0] >= '0' && name[0] <= '9' {
		return m.params
	}
	return varSize(m.env.Get(name))
}

func varSize(vr expand.Variable) float64 {
	n := float64(len(vr.Str))
	for _, v := range vr.List {
		n += float64(len(v)) + 1
	}
	for k, v := range vr.Map {
		n += float64(len(v)+len(k)) + 1
	}
	return n
}

// scan finds the largest variable and the names' total, for ${!x} and ${!prefix*}.
func (m *measure) scan() {
	if m.scanned {
		return
	}
	m.scanned = true
	m.env.Each(func(name string, vr expand.Variable) bool {
		m.maxVar = math.Max(m.maxVar, varSize(vr))
		m.names += float64(len(name) + 1)
		return true
	})
	m.maxVar = math.Max(m.maxVar, m.params)
}

// word is the most bytes w expands to (fields and separators together).
func (m *measure) word(w *syntax.Word) float64 {
	n := 0.0
	var lits strings.Builder
	for _, p := range w.Parts {
		n += m.part(p)
		if l, ok := p.(*syntax.Lit); ok {
			lits.WriteString(l.Value)
		} else {
			lits.WriteString("x")
		}
	}
	if k := braceCount(lits.String()); k > 1 {
		n = (n + 1) * k
	}
	return n
}

func (m *measure) part(p syntax.WordPart) float64 {
	switch p := p.(type) {
	case *syntax.Lit:
		return float64(len(p.Value))
	case *syntax.SglQuoted:
		return float64(len(p.Value))
	case *syntax.DblQuoted:
		n := 0.0
		for _, q := range p.Parts {
			n += m.part(q)
		}
		return n
	case *syntax.ParamExp:
		return m.param(p)
	case *syntax.ArithmExp:
		return 20
	case *syntax.ProcSubst:
		return 32
	case *syntax.ExtGlob:
		return float64(len(p.Pattern.Value))
	}
	return 0 // a command substitution's output is bounded by Limits.Data
}

func (m *measure) param(p *syntax.ParamExp) float64 {
	if p.Length || p.Width {
		return 20
	}
	name := ""
	if p.Param != nil {
		name = p.Param.Value
	}
	var base float64
	switch {
	case p.Excl && (p.Names != 0 || (p.Index != nil && isAtStar(p.Index))):
		m.scan()
		base = m.names
	case p.Excl:
		m.scan()
		base = m.maxVar
	case name == "":
		base = 0
	default:
		base = m.size(name)
	}
	switch {
	case p.Repl != nil:
		with := 0.0
		if p.Repl.With != nil {
			with = m.word(p.Repl.With)
		}
		orig := 0.0
		if p.Repl.Orig != nil {
			orig = m.word(p.Repl.Orig)
		}
		return base + (base+1)*with + orig
	case p.Exp != nil:
		w := 0.0
		if p.Exp.Word != nil {
			w = m.word(p.Exp.Word)
		}
		switch p.Exp.Op {
		case syntax.UpperFirst, syntax.UpperAll, syntax.LowerFirst, syntax.LowerAll:
			return 2*base + w
		case syntax.OtherParamOps:
			return 4*base + float64(len(name)) + 32 + w
		}
		return base + w
	}
	return base
}

func isAtStar(x syntax.ArithmExpr) bool {
	w, ok := x.(*syntax.Word)
	return ok && (w.Lit() == "@" || w.Lit() == "*")
}

var braceREs lazy[*regexp.Regexp]

func braceRE() *regexp.Regexp {
	return braceREs.get(func() *regexp.Regexp {
		return regexp.MustCompile(`\{(-?\d+|[a-zA-Z])\.\.(-?\d+|[a-zA-Z])(?:\.\.(-?\d+))?\}`)
	})
}

// braceCount is at least the number of words brace expansion makes of a word whose
// literal text is s.
func braceCount(s string) float64 {
	if !strings.Contains(s, "{") {
		return 1
	}
	k := 1.0
	for _, g := range braceRE().FindAllStringSubmatch(s, -1) {
		a, b := seqEnd(g[1]), seqEnd(g[2])
		step := 1.0
		if g[3] != "" {
			step = math.Max(1, math.Abs(parseF(g[3])))
		}
		k *= math.Floor(math.Abs(b-a)/step) + 1
	}
	s = braceRE().ReplaceAllString(s, "")
	depth, alts := 0, []float64{}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
			alts = append(alts, 1)
		case ',':
			if depth > 0 {
				alts[depth-1]++
			}
		case '}':
			if depth > 0 {
				k *= alts[depth-1]
				alts = alts[:depth-1]
				depth--
			}
		}
	}
	return k
}

func seqEnd(s string) float64 {
	if len(s) == 1 && (s[0] < '0' || s[0] > '9') {
		return float64(s[0])
	}
	return parseF(s)
}

func parseF(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// checkVars stops the evaluation when the variables hold more than Limits.Vars.
func (s *sim) checkVars(env expand.Environ, where string, line int) error {
	size := 0.0
	env.Each(func(_ string, vr expand.Variable) bool {
		size += varSize(vr)
		return size <= float64(s.opts.Limits.Vars)
	})
	if size > float64(s.opts.Limits.Vars) {
		return s.stop(&LimitError{What: fmt.Sprintf("variables holding more than %d bytes (%s line %d)", s.opts.Limits.Vars, where, line)})
	}
	return nil
}

// produce counts n bytes a command is about to produce against Limits.Data.
func (s *sim) produce(n int, what, where string, line int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data += int64(n)
	if s.data > int64(s.opts.Limits.Data) {
		return s.stopLocked(&LimitError{What: fmt.Sprintf("commands producing more than %d bytes in all (%s, %s line %d)", s.opts.Limits.Data, what, where, line)})
	}
	return nil
}

// checkNesting stops the evaluation when functions, source and eval are nested more
// than Limits.Nesting deep on this goroutine (each level is one frame of the
// interpreter's call; a level takes at least 4 frames, so a short stack is not
// symbolized), or more than Limits.Jobs pipelines, background jobs and process
// substitutions run at once.
func (s *sim) checkNesting(name, where string, line int) error {
	if n := runtime.NumGoroutine() - s.goroutines; n > s.opts.Limits.Jobs {
		return s.stop(&LimitError{What: fmt.Sprintf("more than %d pipelines and background jobs running at once (%s line %d)", s.opts.Limits.Jobs, where, line)})
	}
	s.mu.Lock()
	isFunc := s.funcs[name]
	s.mu.Unlock()
	if !isFunc && name != "eval" && name != "source" && name != "." {
		return nil // only these nest
	}
	pcs := make([]uintptr, 4*s.opts.Limits.Nesting)
	if runtime.Callers(2, pcs) < len(pcs) {
		return nil
	}
	pcs = make([]uintptr, 1<<16)
	pcs = pcs[:runtime.Callers(2, pcs)]
	depth := 0
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		if f.Function == "mvdan.cc/sh/v3/interp.(*Runner).call" {
			depth++
		}
		if !more {
			break
		}
	}
	if depth > s.opts.Limits.Nesting || len(pcs) == 1<<16 {
		return s.stop(&LimitError{What: fmt.Sprintf("functions, source and eval nested more than %d deep (%s line %d)", s.opts.Limits.Nesting, where, line)})
	}
	return nil
}

// printfSize is the most bytes printf FORMAT ARGS... writes, or -1 for a field width
// or precision over Limits.Expansion.
func printfSize(args []string, limit int) int {
	if len(args) == 0 {
		return 0
	}
	format, rest := args[0], args[1:]
	width := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("-+ #0123456789.*", format[j]) >= 0 {
			j++
		}
		for _, f := range strings.FieldsFunc(format[i+1:j], func(r rune) bool { return r < '0' || r > '9' }) {
			if n, err := strconv.Atoi(f); err != nil || n > limit {
				return -1
			} else if n > width {
				width = n
			}
		}
		if strings.Contains(format[i+1:j], "*") {
			for _, a := range rest {
				if n, err := strconv.Atoi(strings.TrimSpace(a)); err == nil && (n > limit || -n > limit) {
					return -1
				}
			}
			width += limit / 64
		}
		i = j
	}
	n := 0
	for _, a := range rest {
		n += 4*len(a) + 1 // %q and \x escapes at most quadruple
	}
	return n + (len(format)*4+width+16)*max(1, len(rest))
}
