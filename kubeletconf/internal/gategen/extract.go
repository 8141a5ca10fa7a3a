package main

import (
	"fmt"
	"go/ast"
	"slices"
	"sort"
	"strings"
)

// The import paths the extractor knows by name.
const (
	kubeletCmd  = "k8s.io/kubernetes/cmd/kubelet"
	utilFeature = "k8s.io/apiserver/pkg/util/feature" // DefaultMutableFeatureGate: the kubelet's gate
	featuregate = "k8s.io/component-base/featuregate"
	baseVersion = "k8s.io/component-base/version"
	gateVar     = "DefaultMutableFeatureGate"
)

// registering are the methods of a feature gate that register gates; notRegistering
// are the other methods whose name starts with Add. A call of any other Add method on
// the kubelet's gate in package initialisation is an error: it may register gates the
// generator does not know how to read.
var (
	registering    = map[string]bool{"Add": true, "AddVersioned": true}
	notRegistering = map[string]bool{"AddDependencies": true, "AddMetrics": true, "AddFlag": true}
)

// A release is what the extractor read from one k8s.io/kubernetes release.
type release struct {
	gates     map[string][]spec // every gate the kubelet registers, its specs canonical
	versioned bool              // featuregate picks a gate's spec by the emulation version (1.31 on)
	binary    ver               // the emulation version, DefaultKubeBinaryVersion, when versioned
	sites     []string          // the registrations found, for -v
	packages  int               // packages of the kubelet's import graph read
	modules   []string          // modules of the kubelet's import graph not read (not k8s.io/kubernetes or its staging modules)
}

// An extractor finds every feature gate the kubelet binary registers in its
// package initialisation.
type extractor struct {
	l       *loader
	ev      *evaluator
	rel     *release
	reached map[*ast.FuncDecl]bool // functions run from package initialisation with the gate
	stack   map[*ast.FuncDecl]bool
}

// extract reads the kubelet's feature gates from the loader's modules.
//
// The kubelet's gate is k8s.io/apiserver/pkg/util/feature's DefaultMutableFeatureGate.
// It starts with k8s.io/component-base/featuregate's own gates (AllAlpha, AllBeta), and
// every package the kubelet binary links may add gates to it in package
// initialisation. So the extractor reads every package of the kubelet's import graph
// in k8s.io/kubernetes and its staging modules (k8s.io/apiserver, k8s.io/client-go,
// k8s.io/component-base, ...), as the release's go.mod pins them, and in each that
// imports util/feature it runs the init functions on the gate: a call of the gate's
// Add or AddVersioned is a registration, whose table it reads; a call that passes the
// gate (or a variable made from it, as pkg/features' client-go adapter) to a function
// is followed into that function, with the parameter standing for the gate. A gate
// registered twice must have the same specs both times (featuregate refuses
// otherwise, and the kubelet would not start). Outside package initialisation, a
// registration, or a function passed the gate, is an error: the generator knows only
// what runs before main.
func extract(l *loader) (*release, error) {
	x := &extractor{
		l: l, ev: &evaluator{l}, rel: &release{gates: map[string][]spec{}},
		reached: map[*ast.FuncDecl]bool{}, stack: map[*ast.FuncDecl]bool{},
	}
	if err := x.initial(); err != nil {
		return nil, err
	}
	graph, modules, err := x.importGraph()
	if err != nil {
		return nil, err
	}
	x.rel.packages, x.rel.modules = len(graph), modules
	var users []*pkg
	for path, deps := range graph {
		if slices.Contains(deps, utilFeature) || path == kubeletCmd || strings.HasPrefix(path, kubeletCmd+"/") {
			p, err := l.load(path)
			if err != nil {
				return nil, err
			}
			users = append(users, p)
		}
	}
	sort.Slice(users, func(i, j int) bool { return users[i].path < users[j].path })
	for _, p := range users {
		for _, in := range p.inits {
			if err := x.interp(in, map[string]bool{}, 0); err != nil {
				return nil, fmt.Errorf("%s init: %w", p.path, err)
			}
		}
	}
	for _, p := range users {
		if err := x.outsideInit(p); err != nil {
			return nil, err
		}
	}
	if err := x.noEmulationChange(users); err != nil {
		return nil, err
	}
	sort.Strings(x.rel.sites)
	return x.rel, nil
}

// initial adds the gates the kubelet's gate is made with: util/feature's
// DefaultMutableFeatureGate must be featuregate.NewFeatureGate(), which starts with
// featuregate's defaultFeatures; from 1.31 that gate is versioned, at the emulation
// version component-base's DefaultKubeBinaryVersion.
func (x *extractor) initial() error {
	uf, err := x.l.load(utilFeature)
	if err != nil {
		return err
	}
	if uf == nil || uf.vars[gateVar] == nil || uf.vars[gateVar].expr == nil {
		return fmt.Errorf("%s: no %s", utilFeature, gateVar)
	}
	v := uf.vars[gateVar]
	c, _ := v.expr.(*ast.CallExpr)
	var sel *ast.SelectorExpr
	if c != nil {
		sel, _ = c.Fun.(*ast.SelectorExpr)
	}
	if sel == nil || len(c.Args) != 0 || sel.Sel.Name != "NewFeatureGate" || uf.importPath(v.file, exprString(sel.X)) != featuregate {
		return fmt.Errorf("%s: %s = %s, not featuregate.NewFeatureGate(): the generator does not know this gate", x.l.pos(v.expr), gateVar, exprString(v.expr))
	}
	fg, err := x.l.load(featuregate)
	if err != nil {
		return err
	}
	if fg == nil || fg.vars["defaultFeatures"] == nil {
		return fmt.Errorf("%s: no defaultFeatures", featuregate)
	}
	d := fg.vars["defaultFeatures"]
	if err := x.register(fg, d.file, d.expr, x.l.pos(d.expr)+" featuregate.NewFeatureGate"); err != nil {
		return err
	}
	x.rel.versioned = fg.funcs["NewVersionedFeatureGate"] != nil
	if !x.rel.versioned {
		return nil
	}
	bv, err := x.l.load(baseVersion)
	if err != nil {
		return err
	}
	if bv == nil || bv.consts["DefaultKubeBinaryVersion"] == nil {
		return fmt.Errorf("%s: no DefaultKubeBinaryVersion", baseVersion)
	}
	c2 := bv.consts["DefaultKubeBinaryVersion"]
	s, err := x.ev.str(bv, c2.file, c2.expr)
	if err != nil {
		return err
	}
	if n, err := fmt.Sscanf(s, "%d.%d", &x.rel.binary.major, &x.rel.binary.minor); n != 2 || err != nil {
		return fmt.Errorf("DefaultKubeBinaryVersion %q: want major.minor", s)
	}
	return nil
}

// importGraph returns the packages the kubelet's command imports, directly or not,
// that k8s.io/kubernetes and its staging modules hold, with their imports, and the
// other modules it imports (not read).
func (x *extractor) importGraph() (map[string][]string, []string, error) {
	graph := map[string][]string{}
	seen := map[string]bool{kubeletCmd: true}
	other := map[string]bool{}
	queue := []string{kubeletCmd}
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		deps, ok, err := x.l.imports(path)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return nil, nil, fmt.Errorf("no source of %s", path)
		}
		graph[path] = deps
		for _, d := range deps {
			if seen[d] {
				continue
			}
			seen[d] = true
			if x.l.moduleOf(d) != nil {
				queue = append(queue, d)
			} else if strings.Contains(strings.SplitN(d, "/", 2)[0], ".") {
				other[moduleGuess(d)] = true
			}
		}
	}
	var mods []string
	for m := range other {
		mods = append(mods, m)
	}
	sort.Strings(mods)
	return graph, mods, nil
}

// moduleGuess names the module of an import path outside the read modules, for -v:
// its first three elements.
func moduleGuess(path string) string {
	parts := strings.SplitN(path, "/", 4)
	if len(parts) > 3 {
		parts = parts[:3]
	}
	return strings.Join(parts, "/")
}

// isGate reports whether e, in file f of fn's package, is the kubelet's gate:
// util/feature.DefaultMutableFeatureGate, a local name bound to it, or a field of one.
func (x *extractor) isGate(f *fn, e ast.Expr, gate map[string]bool) bool {
	switch e := unparen(e).(type) {
	case *ast.Ident:
		return gate[e.Name]
	case *ast.SelectorExpr:
		if x.isGate(f, e.X, gate) {
			return true // a field of a value made from the gate, as the client-go adapter's
		}
		id, ok := e.X.(*ast.Ident)
		return ok && e.Sel.Name == gateVar && f.pkg.importPath(f.file, id.Name) == utilFeature
	case *ast.UnaryExpr:
		return x.isGate(f, e.X, gate)
	}
	return false
}

// mentions reports whether e holds the gate anywhere.
func (x *extractor) mentions(f *fn, e ast.Expr, gate map[string]bool) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if ex, ok := n.(ast.Expr); ok && x.isGate(f, ex, gate) {
			found = true
		}
		return !found
	})
	return found
}

// interp runs the body of f, a function of package initialisation, on the kubelet's
// gate: gate holds the local names that stand for it.
func (x *extractor) interp(f *fn, gate map[string]bool, depth int) error {
	if f.decl.Body == nil || x.stack[f.decl] {
		return nil
	}
	if depth > 12 {
		return fmt.Errorf("%s: calls nested too deep", x.l.pos(f.decl))
	}
	x.stack[f.decl] = true
	defer delete(x.stack, f.decl)
	x.reached[f.decl] = true
	var err error
	ast.Inspect(f.decl.Body, func(n ast.Node) bool {
		if err != nil {
			return false
		}
		switch n := n.(type) {
		case *ast.AssignStmt:
			if len(n.Lhs) == len(n.Rhs) {
				for i, l := range n.Lhs {
					if id, ok := l.(*ast.Ident); ok && x.mentions(f, n.Rhs[i], gate) {
						gate[id.Name] = true
					}
				}
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				if i < len(n.Values) && x.mentions(f, n.Values[i], gate) {
					gate[id.Name] = true
				}
			}
		case *ast.CallExpr:
			err = x.call(f, n, gate, depth)
		}
		return err == nil
	})
	return err
}

// call handles one call in a function of package initialisation.
func (x *extractor) call(f *fn, c *ast.CallExpr, gate map[string]bool, depth int) error {
	if sel, ok := c.Fun.(*ast.SelectorExpr); ok && x.isGate(f, sel.X, gate) {
		m := sel.Sel.Name
		switch {
		case registering[m]:
			if len(c.Args) != 1 {
				return fmt.Errorf("%s: %s with %d arguments", x.l.pos(c), m, len(c.Args))
			}
			return x.register(f.pkg, f.file, c.Args[0], x.l.pos(c))
		case strings.HasPrefix(m, "Add") && !notRegistering[m]:
			return fmt.Errorf("%s: %s.%s on the kubelet's feature gate: the generator does not know whether it registers gates", x.l.pos(c), exprString(sel.X), m)
		}
		return nil
	}
	var bound []int
	for i, a := range c.Args {
		if x.isGate(f, a, gate) {
			bound = append(bound, i)
		}
	}
	if len(bound) == 0 || x.stores(f, c.Fun) {
		return nil
	}
	if x.registersComponent(f, c) {
		x.rel.sites = append(x.rel.sites, x.l.pos(c)+": the gate's emulation version set to the binary's, no gates")
		return nil
	}
	callee, err := x.callee(f, c.Fun)
	if err != nil {
		return err
	}
	var params []string
	for _, p := range callee.decl.Type.Params.List {
		for _, id := range p.Names {
			params = append(params, id.Name)
		}
	}
	inner := map[string]bool{}
	for _, i := range bound {
		if i >= len(params) {
			i = len(params) - 1 // variadic
		}
		if i >= 0 {
			inner[params[i]] = true
		}
	}
	return x.interp(callee, inner, depth+1)
}

// stores reports whether fun is the Store method of a package variable of type
// sync/atomic.Value: it keeps the gate for use after package initialisation
// (client-go's ReplaceFeatureGates), registering nothing.
func (x *extractor) stores(f *fn, fun ast.Expr) bool {
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Store" {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	v := f.pkg.vars[id.Name]
	if v == nil {
		return false
	}
	typ := v.typ
	if typ == nil { // var x = &atomic.Value{}
		if u, ok := v.expr.(*ast.UnaryExpr); ok {
			if lit, ok := u.X.(*ast.CompositeLit); ok {
				typ = lit.Type
			}
		}
	}
	t, ok := typ.(*ast.SelectorExpr)
	if !ok || t.Sel.Name != "Value" {
		return false
	}
	pkgID, ok := t.X.(*ast.Ident)
	return ok && f.pkg.importPath(v.file, pkgID.Name) == "sync/atomic"
}

// registersComponent reports whether c is k8s.io/apiserver/pkg/util/compatibility's
// DefaultComponentGlobalsRegistry.Register(component, DefaultBuildEffectiveVersion(),
// gate) (1.33 on): component-base's registry sets the gate's emulation version to the
// effective version's, which DefaultBuildEffectiveVersion makes the binary's own
// major.minor (from its build's version, else DefaultKubeBinaryVersion), and the
// minimum compatibility version one minor below; it registers no gates. The
// kubelet has no flag that changes either.
func (x *extractor) registersComponent(f *fn, c *ast.CallExpr) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || f.pkg.path != "k8s.io/apiserver/pkg/util/compatibility" || sel.Sel.Name != "Register" || len(c.Args) != 3 {
		return false
	}
	if id, ok := sel.X.(*ast.Ident); !ok || id.Name != "DefaultComponentGlobalsRegistry" {
		return false
	}
	ev, ok := c.Args[1].(*ast.CallExpr)
	if !ok || len(ev.Args) != 0 {
		return false
	}
	id, ok := ev.Fun.(*ast.Ident)
	return ok && id.Name == "DefaultBuildEffectiveVersion"
}

// callee returns the function a call names: one of the package, or of a package the
// file imports. A method or a function value cannot be followed: an error.
func (x *extractor) callee(f *fn, fun ast.Expr) (*fn, error) {
	switch fun := unparen(fun).(type) {
	case *ast.Ident:
		if g := f.pkg.funcs[fun.Name]; g != nil {
			return g, nil
		}
	case *ast.SelectorExpr:
		if id, ok := fun.X.(*ast.Ident); ok {
			if path := f.pkg.importPath(f.file, id.Name); path != "" {
				p, err := x.l.load(path)
				if err != nil {
					return nil, err
				}
				if p == nil {
					return nil, fmt.Errorf("%s: the kubelet's feature gate is passed to %s, whose module the generator does not read", x.l.pos(fun), exprString(fun))
				}
				if g := p.funcs[fun.Sel.Name]; g != nil {
					return g, nil
				}
			}
		}
	}
	return nil, fmt.Errorf("%s: the kubelet's feature gate is passed to %s, which the generator cannot follow", x.l.pos(fun), exprString(fun))
}

// register reads a table given to the gate's Add or AddVersioned and adds its gates.
func (x *extractor) register(p *pkg, f *ast.File, e ast.Expr, site string) error {
	table, versioned, err := x.ev.table(p, f, e)
	if err != nil {
		return fmt.Errorf("%s: %w", site, err)
	}
	x.rel.sites = append(x.rel.sites, fmt.Sprintf("%s: %d gates (versioned: %v)", site, len(table), versioned))
	for name, specs := range table {
		if !versioned {
			specs[0].version = ver{} // featuregate's Add registers a spec at 0.0
		}
		specs = canonical(specs)
		if old, ok := x.rel.gates[name]; ok && !equalSpecs(old, specs) {
			return fmt.Errorf("%s: gate %s registered again with other specs (%v, before %v): the kubelet would not start", site, name, specs, old)
		}
		x.rel.gates[name] = specs
	}
	return nil
}

// outsideInit fails when p registers gates, or passes the kubelet's gate to a
// function, in code that package initialisation does not run.
func (x *extractor) outsideInit(p *pkg) error {
	for _, file := range p.files {
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if ok && x.reached[fd] {
				continue
			}
			f := &fn{decl: fd, file: file, pkg: p}
			var err error
			ast.Inspect(d, func(n ast.Node) bool {
				c, ok := n.(*ast.CallExpr)
				if !ok || err != nil {
					return err == nil
				}
				if sel, ok := c.Fun.(*ast.SelectorExpr); ok && x.isGate(f, sel.X, nil) {
					if registering[sel.Sel.Name] || strings.HasPrefix(sel.Sel.Name, "Add") && !notRegistering[sel.Sel.Name] {
						err = fmt.Errorf("%s: %s outside package initialisation: the generator knows only the gates registered before main", x.l.pos(c), exprString(c.Fun))
					}
					return true
				}
				for _, a := range c.Args {
					if x.isGate(f, a, nil) {
						err = fmt.Errorf("%s: the kubelet's feature gate is passed to %s outside package initialisation: the generator cannot tell whether it registers gates", x.l.pos(c), exprString(c.Fun))
					}
				}
				return err == nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// noEmulationChange fails when the kubelet's command changes the gate's emulation
// version: the generator takes the binary's.
func (x *extractor) noEmulationChange(graph []*pkg) error {
	for _, p := range graph {
		if p.path != kubeletCmd && !strings.HasPrefix(p.path, kubeletCmd+"/") {
			continue
		}
		for _, file := range p.files {
			var err error
			ast.Inspect(file, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok && strings.HasPrefix(sel.Sel.Name, "SetEmulationVersion") && err == nil {
					err = fmt.Errorf("%s: the kubelet sets the feature gate's emulation version (%s): the generator assumes the binary's", x.l.pos(sel), sel.Sel.Name)
				}
				return err == nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
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
