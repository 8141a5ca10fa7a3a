package main

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// A flagInfo is what the sources say about one registered flag.
type flagInfo struct {
	deprecated bool // registered, but marked deprecated (pflag leaves it out of --help)
	hidden     bool // registered, but marked hidden
	// boolean: the flag takes no value of its own: pflag's NoOptDefVal is set, so
	// "--flag" alone is "--flag=true" (or NoOptDefVal) and in "--flag value" the value
	// is the next argument, not the flag's.
	boolean bool
}

// A root maps the import paths under prefix to the source directory dir.
type root struct{ prefix, dir string }

// followed lists the packages whose functions the extractor walks into when a flag
// registration calls them. Calls into any other package are not followed: they do not
// register kubelet flags in any version 1.24-1.38 (the -v report of unfollowed calls
// that pass a flag set says which were seen).
var followed = []string{
	"k8s.io/kubernetes/cmd/kubelet/app/options",
	"k8s.io/kubernetes/pkg/kubelet/config",
	"k8s.io/component-base/logs",
	"k8s.io/component-base/version/verflag",
	"k8s.io/klog/v2",
}

func isFollowed(path string) bool {
	for _, p := range followed {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// registerHelpers are the options package's helpers that re-register a flag of a
// global flag set on the kubelet's (cadvisor's and credential providers' flags): the
// name is their third argument, with '_' turned into '-'.
var registerHelpers = map[string]bool{"register": true, "pflagRegister": true, "registerDeprecated": true}

// A pkg is one parsed package: its non-test files for linux/amd64 (the EKS node's
// build), top-level functions and methods, string constants and struct fields.
type pkg struct {
	path     string
	funcs    map[string]*fn // top-level functions by name
	methods  map[string]*fn // "Type.Method"
	inits    []*fn
	vars     map[string]bool     // package-level variables
	varSpecs []*fn               // package-level variable declarations, each as the decl-less fn of its file, with spec set
	consts   map[string]ast.Expr // package-level constants (resolved on use)
	fields   map[string]typeRef  // struct field name -> its named type
	fileOf   map[*ast.File]map[string]string
	blank    []string // packages its files import for their side effects (import _ "path")
	imports  []string // every package its files import
}

// A typeRef names a type: its package's import path and name.
type typeRef struct{ pkg, name string }

// An fn is a function declaration with the package and file it is in (or, with spec
// set instead of decl, a package-level variable declaration).
type fn struct {
	decl *ast.FuncDecl
	spec *ast.ValueSpec
	file *ast.File
	pkg  *pkg
}

// loader parses packages on demand from the roots.
type loader struct {
	fset  *token.FileSet
	roots []root
	pkgs  map[string]*pkg
	ctx   build.Context
}

func newLoader(roots []root) *loader {
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled = "linux", "amd64", true
	ctx.BuildTags = nil
	return &loader{fset: token.NewFileSet(), roots: roots, pkgs: map[string]*pkg{}, ctx: ctx}
}

// rootOf returns the root that holds path (the one with the longest prefix), or
// false.
func (l *loader) rootOf(path string) (root, bool) {
	var best root
	for _, r := range l.roots {
		if (path == r.prefix || strings.HasPrefix(path, r.prefix+"/")) && len(r.prefix) > len(best.prefix) {
			best = r
		}
	}
	return best, best.prefix != ""
}

// load returns the package with import path path, or nil when no root holds it.
func (l *loader) load(path string) (*pkg, error) {
	if p, ok := l.pkgs[path]; ok {
		return p, nil
	}
	r, ok := l.rootOf(path)
	if !ok {
		l.pkgs[path] = nil
		return nil, nil
	}
	dir := filepath.Join(r.dir, strings.TrimPrefix(path, r.prefix))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("package %s: %w", path, err)
	}
	p := &pkg{
		path: path, funcs: map[string]*fn{}, methods: map[string]*fn{}, vars: map[string]bool{},
		consts: map[string]ast.Expr{}, fields: map[string]typeRef{}, fileOf: map[*ast.File]map[string]string{},
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if ok, err := l.ctx.MatchFile(dir, name); err != nil || !ok {
			continue
		}
		f, err := parser.ParseFile(l.fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		p.addFile(f)
	}
	l.pkgs[path] = p
	return p, nil
}

func (p *pkg) addFile(f *ast.File) {
	imports := map[string]string{}
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		name := filepath.Base(path)
		if strings.HasPrefix(name, "v") && len(name) <= 3 { // k8s.io/klog/v2
			name = filepath.Base(filepath.Dir(path))
		}
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = path
		p.imports = append(p.imports, path)
		if name == "_" {
			p.blank = append(p.blank, path)
		}
	}
	p.fileOf[f] = imports
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			x := &fn{decl: d, file: f, pkg: p}
			switch {
			case d.Recv != nil:
				p.methods[recvName(d.Recv.List[0].Type)+"."+d.Name.Name] = x
			case d.Name.Name == "init":
				p.inits = append(p.inits, x)
			default:
				p.funcs[d.Name.Name] = x
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					if d.Tok == token.VAR {
						p.varSpecs = append(p.varSpecs, &fn{spec: s, file: f, pkg: p})
					}
					for i, n := range s.Names {
						if d.Tok == token.CONST && i < len(s.Values) {
							p.consts[n.Name] = s.Values[i]
						} else if d.Tok == token.VAR {
							p.vars[n.Name] = true
						}
					}
				case *ast.TypeSpec:
					st, ok := s.Type.(*ast.StructType)
					if !ok {
						continue
					}
					for _, fld := range st.Fields.List {
						ref, ok := namedType(fld.Type, imports, p.path)
						if !ok {
							continue
						}
						if len(fld.Names) == 0 {
							p.fields[ref.name] = ref
						}
						for _, n := range fld.Names {
							p.fields[n.Name] = ref
						}
					}
				}
			}
		}
	}
}

// recvName returns the type name of a method receiver (T or *T).
func recvName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// namedType returns the named type of a field or parameter type (T, *T, pkg.T).
func namedType(e ast.Expr, imports map[string]string, self string) (typeRef, bool) {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	switch e := e.(type) {
	case *ast.Ident:
		return typeRef{self, e.Name}, true
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok && imports[x.Name] != "" {
			return typeRef{imports[x.Name], e.Sel.Name}, true
		}
	}
	return typeRef{}, false
}

// flagTypes are the value types of flag.FlagSet's and pflag.FlagSet's registration
// methods: T(name, ...), TP(name, shorthand, ...), TVar(p, name, ...), TVarP(p, name, ...).
var flagTypes = map[string]bool{}

func init() {
	for _, t := range strings.Fields(`Bool BoolSlice BoolFunc BytesBase64 BytesHex Count Duration
		DurationSlice Float32 Float32Slice Float64 Float64Slice Func IP IPMask IPNet IPSlice
		Int Int8 Int16 Int32 Int32Slice Int64 Int64Slice IntSlice String StringArray
		StringSlice StringToInt StringToInt64 StringToString Text Uint Uint8 Uint16 Uint32
		Uint64 UintSlice`) {
		flagTypes[t] = true
	}
}

// nameArg returns the index of the flag name among the arguments of a registration
// method called method, and false when method registers no flag.
func nameArg(method string) (int, bool) {
	m := strings.TrimSuffix(method, "F") // VarPF
	m = strings.TrimSuffix(m, "P")
	if m == "Var" {
		return 1, true
	}
	if t, ok := strings.CutSuffix(m, "Var"); ok && flagTypes[t] {
		return 1, true
	}
	return 0, flagTypes[m] && m != "Text"
}

// A walker collects the flags that a function registers, following calls into the
// followed packages.
type walker struct {
	l          *loader
	flags      map[string]flagInfo
	marks      map[string]flagInfo   // MarkDeprecated/MarkHidden and NoOptDefVal, applied at the end
	globals    map[string]globalDefs // by the package whose (and whose module's) definitions they are
	stack      map[*ast.FuncDecl]bool
	unfollowed map[string]bool // calls not followed that pass a flag set, for -v
}

func newWalker(l *loader) *walker {
	return &walker{
		l: l, flags: map[string]flagInfo{}, marks: map[string]flagInfo{}, globals: map[string]globalDefs{},
		stack: map[*ast.FuncDecl]bool{}, unfollowed: map[string]bool{},
	}
}

// A scope is one function being walked: sinks are the flag sets (by variable name)
// that a VisitAll later copies from, and what was registered on each.
type scope struct {
	f      *fn
	locals map[string]typeRef // parameters and receiver, with their named type if they have one
	sets   map[string]string  // local variables made by NewFlagSet: "flag" or "pflag"
	sinks  map[string]map[string]flagInfo
}

// walk returns the flags f registers. Flags registered on one of sinks go to those
// sinks instead (see scope).
func (w *walker) walk(f *fn, sinks map[string]map[string]flagInfo) (map[string]flagInfo, error) {
	out := map[string]flagInfo{}
	if w.stack[f.decl] || f.decl.Body == nil {
		return out, nil
	}
	w.stack[f.decl] = true
	defer delete(w.stack, f.decl)
	s := &scope{f: f, locals: map[string]typeRef{}, sets: map[string]string{}, sinks: sinks}
	if s.sinks == nil {
		s.sinks = map[string]map[string]flagInfo{}
	}
	imports := f.pkg.fileOf[f.file]
	var params []*ast.Field
	if f.decl.Recv != nil {
		params = append(params, f.decl.Recv.List...)
	}
	params = append(params, f.decl.Type.Params.List...)
	for _, p := range params {
		ref, _ := namedType(p.Type, imports, f.pkg.path)
		for _, n := range p.Names {
			s.locals[n.Name] = ref
		}
	}
	// A flag set that a VisitAll copies from is a sink: what is registered on it is
	// its content, not the function's result.
	ast.Inspect(f.decl.Body, func(n ast.Node) bool {
		if a, ok := n.(*ast.AssignStmt); ok && len(a.Lhs) == len(a.Rhs) {
			for i, l := range a.Lhs {
				if id, ok := l.(*ast.Ident); ok {
					if kind := newFlagSet(f, a.Rhs[i]); kind != "" {
						s.sets[id.Name] = kind
					}
				}
			}
		}
		if c, ok := n.(*ast.CallExpr); ok {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "VisitAll" && copies(c) {
				if id, ok := sel.X.(*ast.Ident); ok && s.sinks[id.Name] == nil && !f.pkg.vars[id.Name] {
					s.sinks[id.Name] = map[string]flagInfo{}
				}
			}
		}
		return true
	})
	var err error
	ast.Inspect(f.decl.Body, func(n ast.Node) bool {
		if err != nil {
			return false
		}
		if a, ok := n.(*ast.AssignStmt); ok {
			err = w.noOptDefVal(f, a, nil, w.marks)
			return err == nil
		}
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		var descend bool
		descend, err = w.call(s, c, out)
		return descend
	})
	return out, err
}

// noOptDefVal records x.Lookup(name).NoOptDefVal = value, which makes the flag name
// boolean unless value is "", in marks. Any other assignment to NoOptDefVal is an
// error: the flag it sets could not be named.
func (w *walker) noOptDefVal(f *fn, a *ast.AssignStmt, env *env, marks map[string]flagInfo) error {
	for i, l := range a.Lhs {
		sel, ok := l.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "NoOptDefVal" {
			continue
		}
		lookup, _ := unparen(sel.X).(*ast.CallExpr)
		var ls *ast.SelectorExpr
		if lookup != nil {
			ls, _ = lookup.Fun.(*ast.SelectorExpr)
		}
		if ls == nil || ls.Sel.Name != "Lookup" || len(lookup.Args) != 1 || len(a.Rhs) != len(a.Lhs) {
			return fmt.Errorf("%s: NoOptDefVal set on %s, not on a flag looked up by name", w.l.fset.Position(a.Pos()), exprString(sel.X))
		}
		name, err := w.constStringIn(f, lookup.Args[0], env)
		if err != nil {
			return err
		}
		value, err := w.constStringIn(f, a.Rhs[i], env)
		if err != nil {
			return err
		}
		m := marks[name]
		m.boolean = value != ""
		marks[name] = m
	}
	return nil
}

// call handles one call expression in scope s, adding what it registers to out; it
// returns whether the walk should look inside the call's arguments.
func (w *walker) call(s *scope, c *ast.CallExpr, out map[string]flagInfo) (bool, error) {
	f := s.f
	target := func(recv ast.Expr) map[string]flagInfo {
		if recv != nil {
			if id, ok := unparen(recv).(*ast.Ident); ok && s.sinks[id.Name] != nil {
				return s.sinks[id.Name]
			}
		}
		for _, a := range c.Args {
			if id, ok := unaddr(a).(*ast.Ident); ok && s.sinks[id.Name] != nil {
				return s.sinks[id.Name]
			}
		}
		return out
	}
	switch fun := c.Fun.(type) {
	case *ast.Ident:
		if registerHelpers[fun.Name] && len(c.Args) >= 3 {
			name, err := w.constString(f, c.Args[2])
			if err != nil {
				return false, err
			}
			def, err := w.registered(f.pkg, fun.Name, name)
			if err != nil {
				return false, fmt.Errorf("%s: %w", w.l.fset.Position(c.Pos()), err)
			}
			add(target(nil), strings.ReplaceAll(name, "_", "-"), flagInfo{deprecated: fun.Name == "registerDeprecated", boolean: def.boolean})
			return false, nil
		}
		if callee := f.pkg.funcs[fun.Name]; callee != nil {
			return true, w.follow(callee, target(nil))
		}
		return true, nil
	case *ast.SelectorExpr:
		return w.selectorCall(s, c, fun, out, target)
	}
	return true, nil
}

// selectorCall is call for x.Method(...) and pkg.Func(...).
func (w *walker) selectorCall(s *scope, c *ast.CallExpr, fun *ast.SelectorExpr, out map[string]flagInfo, target func(ast.Expr) map[string]flagInfo) (bool, error) {
	f := s.f
	imports := f.pkg.fileOf[f.file]
	method := fun.Sel.Name
	recv := unparen(fun.X)
	// pkg.Func(...)
	if id, ok := recv.(*ast.Ident); ok && imports[id.Name] != "" {
		if _, isLocal := s.locals[id.Name]; !isLocal {
			path := imports[id.Name]
			if !isFollowed(path) {
				w.noteUnfollowed(s, c, path+"."+method)
				return true, nil
			}
			p, err := w.l.load(path)
			if err != nil || p == nil {
				return false, err
			}
			if callee := p.funcs[method]; callee != nil {
				return true, w.follow(callee, target(nil))
			}
			return true, nil
		}
	}
	switch method {
	case "VisitAll":
		if !copies(c) {
			return false, nil // looks at the flags, registers none (the kubelet unhides deprecated ones)
		}
		return false, w.visitAll(s, c, out)
	case "AddFlagSet", "AddGoFlagSet":
		return false, nil // the walk already counted what the set holds
	case "MarkDeprecated", "MarkHidden":
		return w.mark(f, c, method)
	case "AddFlag":
		return w.addFlag(f, c, target(recv))
	}
	if i, ok := nameArg(method); ok && len(c.Args) > i {
		name, err := w.constString(f, c.Args[i])
		if err != nil {
			return false, fmt.Errorf("%s: flag name of %s: %w", w.l.fset.Position(c.Pos()), method, err)
		}
		boolean, err := w.boolean(f, method, w.goFlagSet(s, recv), c, nil)
		if err != nil {
			return false, fmt.Errorf("%s: flag %s: %w", w.l.fset.Position(c.Pos()), name, err)
		}
		add(target(recv), name, flagInfo{boolean: boolean})
		return false, nil
	}
	// x.Method(...) and x.Field.Method(...) on a type whose package is followed.
	if ref, ok := w.recvType(s, recv); ok && isFollowed(ref.pkg) {
		p, err := w.l.load(ref.pkg)
		if err != nil || p == nil {
			return false, err
		}
		if callee := p.methods[ref.name+"."+method]; callee != nil {
			return true, w.follow(callee, target(nil))
		}
	} else {
		w.noteUnfollowed(s, c, exprString(recv)+"."+method)
	}
	return true, nil
}

// mark records fs.MarkDeprecated(name, ...) or fs.MarkHidden(name).
func (w *walker) mark(f *fn, c *ast.CallExpr, method string) (bool, error) {
	if len(c.Args) == 0 {
		return true, nil
	}
	name, err := w.constString(f, c.Args[0])
	if err != nil {
		return false, err
	}
	m := w.marks[name]
	m.deprecated = m.deprecated || method == "MarkDeprecated"
	m.hidden = m.hidden || method == "MarkHidden"
	w.marks[name] = m
	return false, nil
}

// addFlag handles fs.AddFlag(other.Lookup(name)), or with pflag.PFlagFromGoFlag
// around the lookup: a flag of another set, by name, added to into.
func (w *walker) addFlag(f *fn, c *ast.CallExpr, into map[string]flagInfo) (bool, error) {
	// fs.AddFlag(other.Lookup(name)), or with pflag.PFlagFromGoFlag around
	// the lookup: a flag of another set, by name.
	var lookup *ast.CallExpr
	for _, a := range c.Args {
		ast.Inspect(a, func(n ast.Node) bool {
			if lc, ok := n.(*ast.CallExpr); ok && lookup == nil {
				if ls, ok := lc.Fun.(*ast.SelectorExpr); ok && ls.Sel.Name == "Lookup" && len(lc.Args) == 1 {
					lookup = lc
				}
			}
			return lookup == nil
		})
	}
	if lookup == nil {
		return true, nil
	}
	name, err := w.constString(f, lookup.Args[0])
	if err != nil {
		return false, err
	}
	// A flag of a global set (flag.Lookup, pflag.Lookup) is defined by this package.
	var info flagInfo
	if set, ok := globalSet(f, lookup.Fun.(*ast.SelectorExpr).X); ok {
		defs, err := w.definitions(f.pkg.path, false)
		if err != nil {
			return false, err
		}
		def, ok := defs[set][name]
		if !ok {
			return false, fmt.Errorf("%s: %s's global flag %s is not defined in %s", w.l.fset.Position(c.Pos()), set, name, f.pkg.path)
		}
		info.boolean = def.boolean
	}
	add(into, name, info)
	return false, nil
}

// follow walks callee and adds its flags to into.
func (w *walker) follow(callee *fn, into map[string]flagInfo) error {
	got, err := w.walk(callee, nil)
	for n, i := range got {
		add(into, n, i)
	}
	return err
}

// recvType returns the named type of a method call's receiver: a parameter, or a
// field (of any struct of the package) reached through one.
func (w *walker) recvType(s *scope, recv ast.Expr) (typeRef, bool) {
	switch r := recv.(type) {
	case *ast.Ident:
		ref, ok := s.locals[r.Name]
		return ref, ok && ref.name != ""
	case *ast.SelectorExpr:
		if _, ok := w.recvType(s, r.X); !ok {
			return typeRef{}, false
		}
		ref, ok := s.f.pkg.fields[r.Sel.Name]
		return ref, ok
	}
	return typeRef{}, false
}

// noteUnfollowed records a call that is not followed but passes a flag set (a
// parameter or variable whose name ends in "fs", "flagset", "local" or "global"), so
// that -v shows what the extractor did not look into.
func (w *walker) noteUnfollowed(s *scope, c *ast.CallExpr, what string) {
	for _, a := range c.Args {
		if id, ok := unaddr(a).(*ast.Ident); ok {
			n := strings.ToLower(id.Name)
			if strings.HasSuffix(n, "fs") || strings.HasSuffix(n, "flagset") || n == "local" || n == "global" {
				w.unfollowed[fmt.Sprintf("%s (in %s.%s)", what, s.f.pkg.path, s.f.decl.Name.Name)] = true
			}
		}
	}
}

// visitAll handles src.VisitAll(func(f *flag.Flag) {...}): the flags of src that the
// function literal registers again (fs.AddFlag(pf), fs.Var(f.Value, f.Name, ...)),
// after its switch on f.Name: a case that returns drops its names (component-base's
// logs.AddFlags drops -v, -vmodule and --log-flush-frequency under
// SkipLoggingConfigurationFlags, which the kubelet always passes), a case that sets
// Deprecated marks them deprecated.
func (w *walker) visitAll(s *scope, c *ast.CallExpr, out map[string]flagInfo) error {
	sel := c.Fun.(*ast.SelectorExpr)
	src, err := w.source(s, unparen(sel.X))
	if err != nil {
		return err
	}
	if len(c.Args) != 1 {
		return nil
	}
	lit, ok := c.Args[0].(*ast.FuncLit)
	if !ok || len(lit.Type.Params.List) != 1 || len(lit.Type.Params.List[0].Names) != 1 {
		return fmt.Errorf("%s: VisitAll without a one-parameter function literal", w.l.fset.Position(c.Pos()))
	}
	param := lit.Type.Params.List[0].Names[0].Name
	var sw *ast.SwitchStmt
	var after []ast.Stmt
	for i, st := range lit.Body.List {
		if x, ok := st.(*ast.SwitchStmt); ok && isSelector(x.Tag, param, "Name") {
			sw, after = x, lit.Body.List[i+1:]
			break
		}
	}
	if sw == nil {
		after = lit.Body.List
	}
	registersAfter := registers(after)
	into := out
	for name, info := range src {
		body, matched := []ast.Stmt(nil), false
		if sw != nil {
			for _, cl := range sw.Body.List {
				cc := cl.(*ast.CaseClause)
				if cc.List == nil && !matched {
					body = cc.Body // default, unless a case matches
				}
				for _, e := range cc.List {
					v, err := w.constString(s.f, e)
					if err != nil {
						return err
					}
					if v == name {
						body, matched = cc.Body, true
					}
				}
			}
		}
		if returns(body) || !registers(body) && !registersAfter {
			continue
		}
		if setsDeprecated(body) {
			info.deprecated = true
		}
		add(into, name, info)
	}
	return nil
}

// source returns the flags registered on the flag set x before a VisitAll over it:
// a local set filled earlier in the function (a sink), or a package-level set filled
// by the package's init functions.
func (w *walker) source(s *scope, x ast.Expr) (map[string]flagInfo, error) {
	id, ok := x.(*ast.Ident)
	if !ok {
		return nil, fmt.Errorf("%s: VisitAll over %s", w.l.fset.Position(x.Pos()), exprString(x))
	}
	if set := s.sinks[id.Name]; set != nil && !s.f.pkg.vars[id.Name] {
		return set, nil
	}
	if !s.f.pkg.vars[id.Name] {
		return nil, fmt.Errorf("%s: VisitAll over %s, which is neither filled here nor a package variable", w.l.fset.Position(x.Pos()), id.Name)
	}
	set := map[string]flagInfo{}
	for _, in := range s.f.pkg.inits {
		if _, err := w.walk(in, map[string]map[string]flagInfo{id.Name: set}); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// constString returns the value of a string constant expression: a literal, a
// constant of the package or of a followed package, or a sum of those.
func (w *walker) constString(f *fn, e ast.Expr) (string, error) {
	return w.constStringIn(f, e, nil)
}

// constStringIn is constString where the parameters bound in env name their
// arguments.
func (w *walker) constStringIn(f *fn, e ast.Expr, env *env) (string, error) {
	switch e := unparen(e).(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			return strconv.Unquote(e.Value)
		}
	case *ast.Ident:
		if b, ok := env.lookup(e.Name); ok {
			return w.constStringIn(b.f, b.e, b.env)
		}
		if v, ok := f.pkg.consts[e.Name]; ok {
			return w.constString(f, v)
		}
	case *ast.SelectorExpr:
		if id, ok := e.X.(*ast.Ident); ok {
			if path := f.pkg.fileOf[f.file][id.Name]; path != "" {
				p, err := w.l.load(path)
				if err != nil {
					return "", err
				}
				if p != nil && p.consts[e.Sel.Name] != nil {
					// In p's scope; a constant of p that names another package's
					// constant would need p's file, which no version needs.
					return w.constString(&fn{pkg: p}, p.consts[e.Sel.Name])
				}
			}
		}
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			a, err := w.constStringIn(f, e.X, env)
			if err != nil {
				return "", err
			}
			b, err := w.constStringIn(f, e.Y, env)
			return a + b, err
		}
	}
	return "", fmt.Errorf("%s: %s is not a string constant", w.l.fset.Position(e.Pos()), exprString(e))
}

func add(m map[string]flagInfo, name string, i flagInfo) {
	old, ok := m[name]
	if ok {
		i.deprecated = i.deprecated || old.deprecated
		i.hidden = i.hidden || old.hidden
		i.boolean = i.boolean || old.boolean
	}
	m[name] = i
}

// copies reports whether a VisitAll call's function registers the flags it visits
// (on another flag set).
func copies(c *ast.CallExpr) bool {
	if len(c.Args) != 1 {
		return false
	}
	lit, ok := c.Args[0].(*ast.FuncLit)
	return ok && registers(lit.Body.List)
}

// registers reports whether stmts call AddFlag or a registration method.
func registers(stmts []ast.Stmt) bool {
	found := false
	for _, st := range stmts {
		ast.Inspect(st, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if sel, ok := c.Fun.(*ast.SelectorExpr); ok {
					if _, reg := nameArg(sel.Sel.Name); reg || sel.Sel.Name == "AddFlag" {
						found = true
					}
				}
			}
			return !found
		})
	}
	return found
}

func returns(stmts []ast.Stmt) bool {
	found := false
	for _, st := range stmts {
		ast.Inspect(st, func(n ast.Node) bool {
			if _, ok := n.(*ast.FuncLit); ok {
				return false
			}
			if _, ok := n.(*ast.ReturnStmt); ok {
				found = true
			}
			return !found
		})
	}
	return found
}

func setsDeprecated(stmts []ast.Stmt) bool {
	found := false
	for _, st := range stmts {
		ast.Inspect(st, func(n ast.Node) bool {
			if a, ok := n.(*ast.AssignStmt); ok {
				for _, l := range a.Lhs {
					if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "Deprecated" {
						found = true
					}
				}
			}
			return !found
		})
	}
	return found
}

func isSelector(e ast.Expr, x, sel string) bool {
	s, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := s.X.(*ast.Ident)
	return ok && id.Name == x && s.Sel.Name == sel
}

func unparen(e ast.Expr) ast.Expr {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

func unaddr(e ast.Expr) ast.Expr {
	if u, ok := unparen(e).(*ast.UnaryExpr); ok && u.Op == token.AND {
		return unparen(u.X)
	}
	return unparen(e)
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	case *ast.CallExpr:
		return exprString(e.Fun) + "(...)"
	}
	return fmt.Sprintf("%T", e)
}

// entries are the functions of k8s.io/kubernetes/cmd/kubelet/app/options that the
// kubelet's command (cmd/kubelet/app.NewKubeletCommand) calls on its flag set.
var entries = []string{"KubeletFlags.AddFlags", "AddKubeletConfigFlags", "AddGlobalFlags"}

// extract returns the sorted flag names the kubelet of the sources under roots
// registers, with what is known about each, and the calls it did not follow.
func extract(roots []root) (map[string]flagInfo, []string, error) {
	l := newLoader(roots)
	w := newWalker(l)
	opts, err := l.load("k8s.io/kubernetes/cmd/kubelet/app/options")
	if err != nil {
		return nil, nil, err
	}
	if opts == nil {
		return nil, nil, fmt.Errorf("no source of k8s.io/kubernetes/cmd/kubelet/app/options")
	}
	for _, e := range entries {
		f := opts.funcs[e]
		if f == nil {
			f = opts.methods[e]
		}
		if f == nil {
			return nil, nil, fmt.Errorf("cmd/kubelet/app/options: no %s", e)
		}
		if err := w.follow(f, w.flags); err != nil {
			return nil, nil, err
		}
	}
	if err := w.command(); err != nil {
		return nil, nil, err
	}
	flags := map[string]flagInfo{}
	for n, i := range w.flags {
		add(flags, strings.ReplaceAll(n, "_", "-"), i)
	}
	for n, m := range w.marks {
		n = strings.ReplaceAll(n, "_", "-")
		if i, ok := flags[n]; ok {
			i.deprecated = i.deprecated || m.deprecated
			i.hidden = i.hidden || m.hidden
			i.boolean = i.boolean || m.boolean
			flags[n] = i
		}
	}
	var unfollowed []string
	for u := range w.unfollowed {
		unfollowed = append(unfollowed, u)
	}
	sort.Strings(unfollowed)
	return flags, unfollowed, nil
}

// command checks NewKubeletCommand: it must hand its flag set to the three entries
// (and nothing else that could register flags), and the flags it registers itself
// (--help) are added.
func (w *walker) command() error {
	app, err := w.l.load("k8s.io/kubernetes/cmd/kubelet/app")
	if err != nil {
		return err
	}
	if app == nil || app.funcs["NewKubeletCommand"] == nil {
		return fmt.Errorf("cmd/kubelet/app: no NewKubeletCommand")
	}
	f := app.funcs["NewKubeletCommand"]
	const set = "cleanFlagSet"
	seen := map[string]bool{}
	known := map[string]bool{"AddFlags": true, "AddKubeletConfigFlags": true, "AddGlobalFlags": true}
	// Calls that take the flag set and register nothing on it.
	harmless := map[string]bool{"PrintFlags": true, "kubeletConfigFlagPrecedence": true}
	var bad []string
	s := &scope{f: f, locals: map[string]typeRef{}, sinks: map[string]map[string]flagInfo{}}
	ast.Inspect(f.decl.Body, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok || err != nil {
			return err == nil
		}
		name := ""
		switch fun := c.Fun.(type) {
		case *ast.Ident:
			name = fun.Name
		case *ast.SelectorExpr:
			name = fun.Sel.Name
			if id, ok := fun.X.(*ast.Ident); ok && id.Name == set {
				if i, reg := nameArg(name); reg && len(c.Args) > i {
					var flag string
					var boolean bool
					flag, err = w.constString(f, c.Args[i])
					if err == nil {
						boolean, err = w.boolean(f, name, false, c, nil)
					}
					add(w.flags, flag, flagInfo{boolean: boolean})
				}
				return true
			}
			if name == "MarkDeprecated" || name == "MarkHidden" {
				_, err = w.call(s, c, nil)
				return false
			}
		}
		for _, a := range c.Args {
			if id, ok := unaddr(a).(*ast.Ident); ok && id.Name == set {
				switch {
				case known[name]:
					seen[name] = true
				case !harmless[name]:
					bad = append(bad, w.l.fset.Position(c.Pos()).String()+": "+exprString(c.Fun))
				}
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	if len(seen) != len(known) || len(bad) > 0 {
		return fmt.Errorf("cmd/kubelet/app.NewKubeletCommand no longer registers its flags as flaggen knows (calls %v with %s; unknown: %v)", seen, set, bad)
	}
	return nil
}
