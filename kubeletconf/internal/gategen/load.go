package main

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A module is a source root: the import paths under path are in dir. dir is ""
// until the module is first needed (fetch fills it).
type module struct {
	path, dir string
}

// A loader parses the packages of the modules on demand, as `go build` takes them for
// linux/amd64 with no build tags (the EKS node's kubelet), test files left out.
type loader struct {
	fset    *token.FileSet
	ctx     build.Context
	modules []*module
	fetch   func(module string) (dir string, err error) // fills a module's dir on first use
	pkgs    map[string]*pkg
	deps    map[string][]string // import paths by package, read with parser.ImportsOnly
}

// A pkg is one parsed package.
type pkg struct {
	path    string
	files   []*ast.File
	imports map[*ast.File]map[string]string // per file, the import paths by the name they are used as
	deps    []string                        // every package its files import
	funcs   map[string]*fn                  // top-level functions by name
	inits   []*fn
	vars    map[string]*value // package-level variables
	consts  map[string]*value // package-level constants
}

// An fn is a function declaration in its package and file.
type fn struct {
	decl *ast.FuncDecl
	file *ast.File
	pkg  *pkg
}

// A value is a package-level constant or variable: its declared type and value, in
// its file.
type value struct {
	name string
	typ  ast.Expr // nil when the declaration has none
	expr ast.Expr // nil when the declaration has none
	file *ast.File
	pkg  *pkg
}

func newLoader(modules []*module, fetch func(string) (string, error)) *loader {
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled = "linux", "amd64", true
	ctx.BuildTags = nil
	return &loader{fset: token.NewFileSet(), ctx: ctx, modules: modules, fetch: fetch, pkgs: map[string]*pkg{}, deps: map[string][]string{}}
}

// moduleOf returns the module that holds the package path (the longest match), or nil.
func (l *loader) moduleOf(path string) *module {
	var best *module
	for _, m := range l.modules {
		if (path == m.path || strings.HasPrefix(path, m.path+"/")) && (best == nil || len(m.path) > len(best.path)) {
			best = m
		}
	}
	return best
}

// files returns the Go files of package path that a linux/amd64 build takes, or
// false when no module holds it.
func (l *loader) files(path string) ([]string, bool, error) {
	m := l.moduleOf(path)
	if m == nil {
		return nil, false, nil
	}
	if m.dir == "" {
		dir, err := l.fetch(m.path)
		if err != nil {
			return nil, false, err
		}
		m.dir = dir
	}
	dir := filepath.Join(m.dir, strings.TrimPrefix(path, m.path))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, false, fmt.Errorf("package %s: %w", path, err)
	}
	var files []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if ok, err := l.ctx.MatchFile(dir, name); err != nil || !ok {
			continue
		}
		files = append(files, filepath.Join(dir, name))
	}
	return files, true, nil
}

// imports returns the packages that package path imports, reading only the files'
// imports, or false when no module holds it.
func (l *loader) imports(path string) ([]string, bool, error) {
	if d, ok := l.deps[path]; ok {
		return d, true, nil
	}
	if p, ok := l.pkgs[path]; ok && p != nil {
		return p.deps, true, nil
	}
	files, ok, err := l.files(path)
	if err != nil || !ok {
		return nil, ok, err
	}
	var deps []string
	seen := map[string]bool{}
	for _, name := range files {
		f, err := parser.ParseFile(l.fset, name, nil, parser.ImportsOnly)
		if err != nil {
			return nil, false, err
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if !seen[p] {
				seen[p] = true
				deps = append(deps, p)
			}
		}
	}
	l.deps[path] = deps
	return deps, true, nil
}

// load returns the package path, or nil when no module holds it.
func (l *loader) load(path string) (*pkg, error) {
	if p, ok := l.pkgs[path]; ok {
		return p, nil
	}
	files, ok, err := l.files(path)
	if err != nil {
		return nil, err
	}
	if !ok {
		l.pkgs[path] = nil
		return nil, nil
	}
	p := &pkg{
		path: path, imports: map[*ast.File]map[string]string{}, funcs: map[string]*fn{},
		vars: map[string]*value{}, consts: map[string]*value{},
	}
	seen := map[string]bool{}
	for _, name := range files {
		f, err := parser.ParseFile(l.fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		p.add(f, seen)
	}
	l.pkgs[path] = p
	return p, nil
}

// add adds a file's declarations to p.
func (p *pkg) add(f *ast.File, seen map[string]bool) {
	p.files = append(p.files, f)
	imports := map[string]string{}
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		name := filepath.Base(path)
		if strings.HasPrefix(name, "v") && len(name) <= 3 { // k8s.io/klog/v2, logs/api/v1
			name = filepath.Base(filepath.Dir(path))
		}
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = path
		if !seen[path] {
			seen[path] = true
			p.deps = append(p.deps, path)
		}
	}
	p.imports[f] = imports
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			x := &fn{decl: d, file: f, pkg: p}
			switch {
			case d.Recv != nil:
			case d.Name.Name == "init":
				p.inits = append(p.inits, x)
			default:
				p.funcs[d.Name.Name] = x
			}
		case *ast.GenDecl:
			if d.Tok != token.CONST && d.Tok != token.VAR {
				continue
			}
			var typ ast.Expr
			var values []ast.Expr
			for _, s := range d.Specs {
				s := s.(*ast.ValueSpec)
				if s.Type != nil || len(s.Values) > 0 {
					typ, values = s.Type, s.Values // a constant without either repeats the one before
				}
				for i, n := range s.Names {
					v := &value{name: n.Name, typ: typ, file: f, pkg: p}
					if i < len(values) {
						v.expr = values[i]
					}
					if d.Tok == token.CONST {
						p.consts[n.Name] = v
					} else {
						v.typ, v.expr = s.Type, nil
						if i < len(s.Values) {
							v.expr = s.Values[i]
						}
						p.vars[n.Name] = v
					}
				}
			}
		}
	}
}

// importPath returns the import path that the name id stands for in file f of p, or "".
func (p *pkg) importPath(f *ast.File, id string) string {
	return p.imports[f][id]
}

// pos returns the position of n for messages.
func (l *loader) pos(n ast.Node) string {
	return l.fset.Position(n.Pos()).String()
}
