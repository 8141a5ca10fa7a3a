package main

import (
	"fmt"
	"go/ast"
	"strings"
)

// The kubelet takes some flags from the process's global flag sets, by name: cadvisor's
// (and, before 1.30, the credential providers') through the options package's
// register helpers, and --version through verflag's AddFlags. Whether such a flag is
// boolean is decided where its package defines it, in package initialisation. This
// file reads those definitions.

// An env binds the parameters of a function being read to the arguments of its call.
type env struct {
	vars map[string]binding
}

// A binding is an argument: its expression, in the function and env of the call.
type binding struct {
	e   ast.Expr
	f   *fn
	env *env
}

func (e *env) lookup(name string) (binding, bool) {
	if e == nil {
		return binding{}, false
	}
	b, ok := e.vars[name]
	return b, ok
}

// globalDefs are the flags defined on the process's global flag sets, by set ("flag"
// for the standard library's flag.CommandLine, "pflag" for pflag.CommandLine) and
// name.
type globalDefs map[string]map[string]flagInfo

// flagPackages are the import paths of the flag packages, by the name of their set in
// globalDefs.
var flagPackages = map[string]string{"flag": "flag", "github.com/spf13/pflag": "pflag"}

// globalSet reports which global flag set x is: a flag package (its package-level
// functions act on its CommandLine) or its CommandLine.
func globalSet(f *fn, x ast.Expr) (string, bool) {
	if sel, ok := unparen(x).(*ast.SelectorExpr); ok && sel.Sel.Name == "CommandLine" {
		x = sel.X
	}
	id, ok := unparen(x).(*ast.Ident)
	if !ok {
		return "", false
	}
	set, ok := flagPackages[f.pkg.fileOf[f.file][id.Name]]
	return set, ok
}

// registered returns what the global flag set of a register helper of the options
// package (register and registerDeprecated: flag.CommandLine; pflagRegister:
// pflag.CommandLine) holds under name: a flag defined by one of the packages the
// options package imports for that purpose (import _ "..."), or by a package of the
// same module they import.
func (w *walker) registered(options *pkg, helper, name string) (flagInfo, error) {
	set := "flag"
	if helper == "pflagRegister" {
		set = "pflag"
	}
	var found []string
	var info flagInfo
	for _, b := range options.blank {
		defs, err := w.definitions(b, true)
		if err != nil {
			return flagInfo{}, err
		}
		if d, ok := defs[set][name]; ok {
			if len(found) > 0 && d != info {
				return flagInfo{}, fmt.Errorf("%s's global flag %s is defined differently by the imports of %s and %s", set, name, found[0], b)
			}
			found, info = append(found, b), d
		}
	}
	if len(found) == 0 {
		return flagInfo{}, fmt.Errorf("%s's global flag %s, registered by %s, is defined by none of the packages %s imports for their flags (%s)",
			set, name, helper, options.path, strings.Join(options.blank, ", "))
	}
	return info, nil
}

// definitions returns the global flags that package path defines in its package
// initialisation (variable declarations and init functions, and the functions of the
// package they call) and, with deep, those of the packages of the same root that it
// imports, transitively.
func (w *walker) definitions(path string, deep bool) (globalDefs, error) {
	key := fmt.Sprintf("%s %v", path, deep)
	if d, ok := w.globals[key]; ok {
		return d, nil
	}
	defs := globalDefs{"flag": {}, "pflag": {}}
	r, _ := w.l.rootOf(path)
	prefix := r.prefix
	seen := map[string]bool{}
	queue := []string{path}
	for len(queue) > 0 {
		p, err := w.l.load(queue[0])
		queue = queue[1:]
		if err != nil {
			return nil, err
		}
		if p == nil || seen[p.path] {
			continue
		}
		seen[p.path] = true
		for _, v := range p.varSpecs {
			for _, e := range v.spec.Values {
				if err := w.scanDefinitions(v, e, nil, 0, defs); err != nil {
					return nil, err
				}
			}
		}
		for _, in := range p.inits {
			if err := w.scanDefinitions(in, in.decl.Body, nil, 0, defs); err != nil {
				return nil, err
			}
		}
		if deep {
			for _, im := range p.imports {
				if prefix != "" && (im == prefix || strings.HasPrefix(im, prefix+"/")) && !seen[im] {
					queue = append(queue, im)
				}
			}
		}
	}
	w.globals[key] = defs
	return defs, nil
}

// scanDefinitions adds to defs the global flags that node, in f, defines, following
// calls of the package's own functions with their arguments bound.
func (w *walker) scanDefinitions(f *fn, node ast.Node, e *env, depth int, defs globalDefs) error {
	var err error
	ast.Inspect(node, func(n ast.Node) bool {
		if err != nil {
			return false
		}
		switch n := n.(type) {
		case *ast.AssignStmt:
			err = w.globalNoOptDefVal(f, n, e, defs)
		case *ast.CallExpr:
			switch fun := n.Fun.(type) {
			case *ast.SelectorExpr:
				set, ok := globalSet(f, fun.X)
				i, reg := nameArg(fun.Sel.Name)
				if !ok || !reg || len(n.Args) <= i {
					return true
				}
				var name string
				var boolean bool
				if name, err = w.constStringIn(f, n.Args[i], e); err != nil {
					err = fmt.Errorf("%s: global flag name of %s: %w", w.l.fset.Position(n.Pos()), fun.Sel.Name, err)
					return false
				}
				if boolean, err = w.boolean(f, fun.Sel.Name, set == "flag", n, e); err != nil {
					err = fmt.Errorf("%s: global flag %s: %w", w.l.fset.Position(n.Pos()), name, err)
					return false
				}
				add(defs[set], name, flagInfo{boolean: boolean})
			case *ast.Ident:
				callee := f.pkg.funcs[fun.Name]
				if callee == nil || callee.decl.Body == nil || depth >= 8 {
					return true
				}
				inner := &env{vars: map[string]binding{}}
				var names []string
				for _, p := range callee.decl.Type.Params.List {
					for _, id := range p.Names {
						names = append(names, id.Name)
					}
				}
				for i, a := range n.Args {
					if i < len(names) {
						inner.vars[names[i]] = binding{e: a, f: f, env: e}
					}
				}
				err = w.scanDefinitions(callee, callee.decl.Body, inner, depth+1, defs)
			}
		}
		return err == nil
	})
	return err
}

// globalNoOptDefVal records set.Lookup(name).NoOptDefVal = value for a global set.
func (w *walker) globalNoOptDefVal(f *fn, a *ast.AssignStmt, e *env, defs globalDefs) error {
	for i, l := range a.Lhs {
		sel, ok := l.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "NoOptDefVal" || len(a.Rhs) != len(a.Lhs) {
			continue
		}
		lookup, ok := unparen(sel.X).(*ast.CallExpr)
		if !ok || len(lookup.Args) != 1 {
			continue
		}
		ls, ok := lookup.Fun.(*ast.SelectorExpr)
		if !ok || ls.Sel.Name != "Lookup" {
			continue
		}
		set, ok := globalSet(f, ls.X)
		if !ok {
			continue
		}
		name, err := w.constStringIn(f, lookup.Args[0], e)
		if err != nil {
			return err
		}
		value, err := w.constStringIn(f, a.Rhs[i], e)
		if err != nil {
			return err
		}
		d := defs[set][name]
		d.boolean = value != ""
		defs[set][name] = d
	}
	return nil
}

// boolean reports whether a flag registered by method takes no value: the Bool and
// BoolFunc methods of both flag packages and pflag's Count set NoOptDefVal (a
// standard library flag gets it when the kubelet's pflag set takes it in, through
// pflag.PFlagFromGoFlag, which sets it for a value whose IsBoolFlag() is true); so
// does a standard library Var whose value's type has an IsBoolFlag method returning
// true. pflag's Var sets none.
func (w *walker) boolean(f *fn, method string, goSet bool, c *ast.CallExpr, e *env) (bool, error) {
	m := strings.TrimSuffix(strings.TrimSuffix(method, "F"), "P")
	m = strings.TrimSuffix(m, "Var")
	switch m {
	case "Bool", "BoolFunc", "Count":
		return true, nil
	case "":
		if goSet && len(c.Args) > 0 {
			return w.isBoolValue(f, c.Args[0], e)
		}
	}
	return false, nil
}

// goFlagSet reports whether recv, in s, is a standard library flag set: a parameter
// of type *flag.FlagSet, a variable made by flag.NewFlagSet, or flag.CommandLine.
func (w *walker) goFlagSet(s *scope, recv ast.Expr) bool {
	if set, ok := globalSet(s.f, recv); ok {
		return set == "flag"
	}
	id, ok := unparen(recv).(*ast.Ident)
	if !ok {
		return false
	}
	if ref, ok := s.locals[id.Name]; ok {
		return ref.pkg == "flag"
	}
	if kind, ok := s.sets[id.Name]; ok {
		return kind == "flag"
	}
	for _, v := range s.f.pkg.varSpecs {
		for i, n := range v.spec.Names {
			if n.Name == id.Name && i < len(v.spec.Values) {
				return newFlagSet(v, v.spec.Values[i]) == "flag"
			}
		}
	}
	return false
}

// newFlagSet returns the set kind that e makes when it is a call of a flag package's
// NewFlagSet, else "".
func newFlagSet(f *fn, e ast.Expr) string {
	c, ok := unparen(e).(*ast.CallExpr)
	if !ok {
		return ""
	}
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "NewFlagSet" {
		return ""
	}
	set, _ := globalSet(f, sel.X)
	return set
}

// isBoolValue reports whether the flag.Value e, in f, has an IsBoolFlag method that
// returns true. e must name its type: &x.field, a composite literal or a parameter
// bound to one of those.
func (w *walker) isBoolValue(f *fn, e ast.Expr, en *env) (bool, error) {
	var ref typeRef
	switch x := unaddr(e).(type) {
	case *ast.Ident:
		if b, ok := en.lookup(x.Name); ok {
			return w.isBoolValue(b.f, b.e, b.env)
		}
		return false, fmt.Errorf("cannot tell the type of the value %s", x.Name)
	case *ast.SelectorExpr:
		r, ok := f.pkg.fields[x.Sel.Name]
		if !ok {
			return false, fmt.Errorf("cannot tell the type of the value %s", exprString(x))
		}
		ref = r
	case *ast.CompositeLit:
		r, ok := namedType(x.Type, f.pkg.fileOf[f.file], f.pkg.path)
		if !ok {
			return false, fmt.Errorf("cannot tell the type of a composite literal value")
		}
		ref = r
	default:
		return false, fmt.Errorf("cannot tell the type of the value %s", exprString(x))
	}
	p, err := w.l.load(ref.pkg)
	if err != nil {
		return false, err
	}
	if p == nil {
		return false, fmt.Errorf("the value's type %s.%s is in no source root", ref.pkg, ref.name)
	}
	m := p.methods[ref.name+".IsBoolFlag"]
	if m == nil {
		return false, nil
	}
	if b := m.decl.Body; b != nil && len(b.List) == 1 {
		if r, ok := b.List[0].(*ast.ReturnStmt); ok && len(r.Results) == 1 {
			if id, ok := r.Results[0].(*ast.Ident); ok && (id.Name == "true" || id.Name == "false") {
				return id.Name == "true", nil
			}
		}
	}
	return false, fmt.Errorf("%s.%s.IsBoolFlag does not simply return true or false", ref.pkg, ref.name)
}
