package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"sort"
	"strconv"
	"strings"
)

// A spec is one FeatureSpec of a gate, as k8s.io/component-base/featuregate holds it.
type spec struct {
	version   ver  // the version it takes effect in; 0.0 for an unversioned spec
	minCompat *ver // MinCompatibilityVersion (1.35 on), nil when unset
	def, lock bool // Default, LockToDefault
	stage     string
}

// A ver is a major.minor version.
type ver struct{ major, minor int }

func (v ver) less(w ver) bool {
	return v.major < w.major || v.major == w.major && v.minor < w.minor
}

func (v ver) String() string { return fmt.Sprintf("%d.%d", v.major, v.minor) }

func (s spec) String() string {
	mc := ""
	if s.minCompat != nil {
		mc = " minCompat " + s.minCompat.String()
	}
	return fmt.Sprintf("{%s %q default=%v locked=%v%s}", s.version, s.stage, s.def, s.lock, mc)
}

func equalSpecs(a, b []spec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.version != y.version || x.def != y.def || x.lock != y.lock || x.stage != y.stage || (x.minCompat == nil) != (y.minCompat == nil) ||
			x.minCompat != nil && *x.minCompat != *y.minCompat {
			return false
		}
	}
	return true
}

// canonical returns specs as featuregate's AddVersioned stores them: in version order
// (1.31-1.34 sort them; from 1.35 they must come so), each without a
// MinCompatibilityVersion taking the one before's (1.35 on).
func canonical(specs []spec) []spec {
	out := append([]spec(nil), specs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].version.less(out[j].version) })
	for i := 1; i < len(out); i++ {
		if out[i].minCompat == nil {
			out[i].minCompat = out[i-1].minCompat
		}
	}
	return out
}

// An evaluator reads constant expressions and feature gate tables in the loader's
// packages.
type evaluator struct{ l *loader }

// constant returns the value of a constant expression e in file f of p: a string,
// bool or int literal, a constant of the package or of an imported one, a conversion
// of one (featuregate.Feature(x), prerelease("ALPHA")), or a sum of strings. Anything
// else is an error: a gate table the generator cannot read is never skipped.
func (ev *evaluator) constant(p *pkg, f *ast.File, e ast.Expr) (any, error) {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return ev.constant(p, f, e.X)
	case *ast.BasicLit:
		switch e.Kind {
		case token.STRING:
			return strconv.Unquote(e.Value)
		case token.INT:
			return strconv.Atoi(e.Value)
		}
	case *ast.Ident:
		switch e.Name {
		case "true", "false":
			if _, shadowed := p.consts[e.Name]; !shadowed {
				return e.Name == "true", nil
			}
		}
		if c := p.consts[e.Name]; c != nil && c.expr != nil {
			return ev.constant(c.pkg, c.file, c.expr)
		}
	case *ast.SelectorExpr:
		if id, ok := e.X.(*ast.Ident); ok {
			if path := p.importPath(f, id.Name); path != "" {
				q, err := ev.l.load(path)
				if err != nil {
					return nil, err
				}
				if q != nil {
					if c := q.consts[e.Sel.Name]; c != nil && c.expr != nil {
						return ev.constant(q, c.file, c.expr)
					}
				}
			}
		}
	case *ast.CallExpr:
		// A conversion: a call of something that is not a function of the package.
		if len(e.Args) == 1 && !ev.isFunc(p, f, e.Fun) {
			return ev.constant(p, f, e.Args[0])
		}
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			a, err := ev.constant(p, f, e.X)
			if err != nil {
				return nil, err
			}
			b, err := ev.constant(p, f, e.Y)
			if err != nil {
				return nil, err
			}
			as, ok1 := a.(string)
			bs, ok2 := b.(string)
			if ok1 && ok2 {
				return as + bs, nil
			}
		}
	}
	return nil, fmt.Errorf("%s: %s is not a constant the generator can read", ev.l.pos(e), exprString(e))
}

// isFunc reports whether fun names a function (not a type) of p or of a package p
// imports in f.
func (ev *evaluator) isFunc(p *pkg, f *ast.File, fun ast.Expr) bool {
	switch fun := fun.(type) {
	case *ast.Ident:
		return p.funcs[fun.Name] != nil
	case *ast.SelectorExpr:
		if id, ok := fun.X.(*ast.Ident); ok {
			if q, _ := ev.l.load(p.importPath(f, id.Name)); q != nil {
				return q.funcs[fun.Sel.Name] != nil
			}
		}
	}
	return false
}

func (ev *evaluator) str(p *pkg, f *ast.File, e ast.Expr) (string, error) {
	v, err := ev.constant(p, f, e)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s: %s is a %T, want a string", ev.l.pos(e), exprString(e), v)
	}
	return s, nil
}

func (ev *evaluator) boolean(p *pkg, f *ast.File, e ast.Expr) (bool, error) {
	v, err := ev.constant(p, f, e)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("%s: %s is a %T, want a bool", ev.l.pos(e), exprString(e), v)
	}
	return b, nil
}

const versionPkg = "k8s.io/apimachinery/pkg/util/version"

// version reads version.MustParse("1.31") or version.MajorMinor(1, 31).
func (ev *evaluator) version(p *pkg, f *ast.File, e ast.Expr) (ver, error) {
	c, ok := e.(*ast.CallExpr)
	var sel *ast.SelectorExpr
	if ok {
		sel, _ = c.Fun.(*ast.SelectorExpr)
	}
	if sel != nil {
		if id, ok := sel.X.(*ast.Ident); ok && p.importPath(f, id.Name) == versionPkg {
			switch {
			case sel.Sel.Name == "MustParse" && len(c.Args) == 1:
				s, err := ev.str(p, f, c.Args[0])
				if err != nil {
					return ver{}, err
				}
				var v ver
				if n, err := fmt.Sscanf(s, "%d.%d", &v.major, &v.minor); n != 2 || err != nil || strings.Count(s, ".") != 1 {
					return ver{}, fmt.Errorf("%s: version %q: want major.minor", ev.l.pos(e), s)
				}
				return v, nil
			case sel.Sel.Name == "MajorMinor" && len(c.Args) == 2:
				var v ver
				for i, dst := range []*int{&v.major, &v.minor} {
					x, err := ev.constant(p, f, c.Args[i])
					if err != nil {
						return ver{}, err
					}
					n, ok := x.(int)
					if !ok {
						return ver{}, fmt.Errorf("%s: %s is not an int", ev.l.pos(c.Args[i]), exprString(c.Args[i]))
					}
					*dst = n
				}
				return v, nil
			}
		}
	}
	return ver{}, fmt.Errorf("%s: %s is not a version the generator can read", ev.l.pos(e), exprString(e))
}

// table reads a feature gate table, e, in file f of p: a map composite literal of
// featuregate (or client-go's features) FeatureSpec or VersionedSpecs by gate name,
// given as such, as a package variable, or as a function of the package without
// parameters that returns one. It returns each gate's specs and whether the table
// is versioned.
func (ev *evaluator) table(p *pkg, f *ast.File, e ast.Expr) (map[string][]spec, bool, error) {
	switch x := e.(type) {
	case *ast.ParenExpr:
		return ev.table(p, f, x.X)
	case *ast.Ident:
		if v := p.vars[x.Name]; v != nil && v.expr != nil {
			return ev.table(v.pkg, v.file, v.expr)
		}
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok {
			q, err := ev.l.load(p.importPath(f, id.Name))
			if err != nil {
				return nil, false, err
			}
			if q != nil {
				if v := q.vars[x.Sel.Name]; v != nil && v.expr != nil {
					return ev.table(q, v.file, v.expr)
				}
			}
		}
	case *ast.CallExpr:
		if id, ok := x.Fun.(*ast.Ident); ok && len(x.Args) == 0 {
			if g := p.funcs[id.Name]; g != nil && g.decl.Type.Params.NumFields() == 0 {
				if r := onlyReturn(g.decl.Body); r != nil {
					return ev.table(g.pkg, g.file, r)
				}
			}
		}
	case *ast.CompositeLit:
		if m, ok := x.Type.(*ast.MapType); ok {
			return ev.mapLit(p, f, m, x)
		}
	}
	return nil, false, fmt.Errorf("%s: %s is not a feature gate table the generator can read", ev.l.pos(e), exprString(e))
}

// onlyReturn returns the expression of a body that is one return statement.
func onlyReturn(b *ast.BlockStmt) ast.Expr {
	if b == nil || len(b.List) != 1 {
		return nil
	}
	r, ok := b.List[0].(*ast.ReturnStmt)
	if !ok || len(r.Results) != 1 {
		return nil
	}
	return r.Results[0]
}

func (ev *evaluator) mapLit(p *pkg, f *ast.File, m *ast.MapType, lit *ast.CompositeLit) (map[string][]spec, bool, error) {
	var versioned bool
	switch typeName(m.Value) {
	case "VersionedSpecs":
		versioned = true
	case "FeatureSpec":
	default:
		return nil, false, fmt.Errorf("%s: a map of %s is not a feature gate table", ev.l.pos(lit), exprString(m.Value))
	}
	out := map[string][]spec{}
	for _, elt := range lit.Elts {
		kv, ok := elt.(*ast.KeyValueExpr)
		if !ok {
			return nil, false, fmt.Errorf("%s: a map element without a key", ev.l.pos(elt))
		}
		name, err := ev.str(p, f, kv.Key)
		if err != nil {
			return nil, false, err
		}
		if _, dup := out[name]; dup {
			return nil, false, fmt.Errorf("%s: gate %s twice in one table", ev.l.pos(kv), name)
		}
		var specs []spec
		if versioned {
			list, ok := kv.Value.(*ast.CompositeLit)
			if !ok {
				return nil, false, fmt.Errorf("%s: the specs of %s are not a literal", ev.l.pos(kv.Value), name)
			}
			for _, s := range list.Elts {
				x, err := ev.spec(p, f, s, true)
				if err != nil {
					return nil, false, fmt.Errorf("gate %s: %w", name, err)
				}
				specs = append(specs, x)
			}
		} else {
			x, err := ev.spec(p, f, kv.Value, false)
			if err != nil {
				return nil, false, fmt.Errorf("gate %s: %w", name, err)
			}
			specs = []spec{x}
		}
		if len(specs) == 0 {
			return nil, false, fmt.Errorf("%s: gate %s has no spec", ev.l.pos(kv), name)
		}
		out[name] = specs
	}
	return out, versioned, nil
}

// spec reads one FeatureSpec literal. A versioned spec must name its Version.
func (ev *evaluator) spec(p *pkg, f *ast.File, e ast.Expr, versioned bool) (spec, error) {
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return spec{}, fmt.Errorf("%s: %s is not a FeatureSpec literal", ev.l.pos(e), exprString(e))
	}
	var s spec
	var hasVersion, hasStage bool
	for _, elt := range lit.Elts {
		kv, _ := elt.(*ast.KeyValueExpr)
		var key *ast.Ident
		if kv != nil {
			key, _ = kv.Key.(*ast.Ident)
		}
		if key == nil {
			return spec{}, fmt.Errorf("%s: a FeatureSpec field without a name", ev.l.pos(elt))
		}
		var err error
		switch key.Name {
		case "Default":
			s.def, err = ev.boolean(p, f, kv.Value)
		case "LockToDefault":
			s.lock, err = ev.boolean(p, f, kv.Value)
		case "PreRelease":
			s.stage, err = ev.str(p, f, kv.Value)
			hasStage = true
		case "Version":
			s.version, err = ev.version(p, f, kv.Value)
			hasVersion = true
		case "MinCompatibilityVersion":
			var v ver
			v, err = ev.version(p, f, kv.Value)
			s.minCompat = &v
		default:
			err = fmt.Errorf("%s: FeatureSpec field %s is unknown to the generator", ev.l.pos(kv), key.Name)
		}
		if err != nil {
			return spec{}, err
		}
	}
	if versioned && !hasVersion {
		return spec{}, fmt.Errorf("%s: a versioned spec without a Version", ev.l.pos(e))
	}
	if !hasStage {
		return spec{}, fmt.Errorf("%s: a spec without a PreRelease", ev.l.pos(e))
	}
	return s, nil
}

// typeName returns the name of a type expression: T, pkg.T or *T.
func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return typeName(e.X)
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

// exprString returns a short form of an expression for messages.
func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	case *ast.CallExpr:
		return exprString(e.Fun) + "(...)"
	case *ast.StarExpr:
		return "*" + exprString(e.X)
	case *ast.UnaryExpr:
		return e.Op.String() + exprString(e.X)
	case *ast.ParenExpr:
		return "(" + exprString(e.X) + ")"
	case *ast.BasicLit:
		return e.Value
	case *ast.CompositeLit:
		return exprString(e.Type) + "{...}"
	}
	return fmt.Sprintf("%T", e)
}
