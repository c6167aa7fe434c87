// Package seamcheck proves statically that libnrt's reverse callbacks stay on
// their side of the seam (docs/sources.md#s000-4): no function libnccom can call back
// into — every //export function of runtime/nrt — can reach a forward entry
// point, that is a cgo call of a trampoline (C.nccl*), of the slot table
// machinery (C.nrt_nccl_*), of a neuron* symbol or of the handoff that loads
// libnccom, or a read of the slot table. Such a path would let the two
// binaries recurse across the seam. CheckShims does the same for the C shims
// in front of the Go callbacks, on their compiled object.
//
// The check builds the SSA form of runtime/nrt and of the module's packages
// it imports (golang.org/x/tools/go/packages, go/ssa), computes a call graph
// by class hierarchy analysis (go/callgraph/cha: every interface call may
// reach every method that implements it, every call of a function value
// every function of its type) and walks it from each callback. Functions of
// the standard library and of other modules are not analysed (their bodies
// are not loaded), so a function value a reachable function hands to one of
// them counts as called.
package seamcheck

import (
	"fmt"
	"go/ast"
	"sort"
	"strings"

	"golang.org/x/tools/go/callgraph"
	"golang.org/x/tools/go/callgraph/cha"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

// Package is the import path of the package whose //export functions are
// the reverse callbacks.
const Package = "github.com/nrtabi/nrtabi/runtime/nrt"

const module = "github.com/nrtabi/nrtabi/"

// Config says where to load from. Overlay replaces file contents by absolute
// path (go/packages' overlay), so a test can plant a call without touching
// the tree.
type Config struct {
	Dir     string
	Overlay map[string][]byte
	// Tags are the build tags of the release to load (runtime/nrt builds
	// only under one release's tag: docs/generator.md#building-for-a-release).
	Tags string
}

// buildFlags are the go command flags of cfg.
func (cfg Config) buildFlags() []string {
	if cfg.Tags == "" {
		return nil
	}
	return []string{"-tags", cfg.Tags}
}

// Violation is one callback that reaches the forward side, with the call
// path that does it.
type Violation struct {
	Callback string
	Path     []string // callback ... forward entry point
}

func (v Violation) String() string {
	return fmt.Sprintf("reverse callback %s reaches the forward leg: %s", v.Callback, strings.Join(v.Path, " -> "))
}

// Result is what the check saw: the callbacks it walked from, how many
// functions they reach, and the violations.
type Result struct {
	Callbacks  []string
	Reached    int
	Violations []Violation
}

// Check loads runtime/nrt and walks the call graph from every callback.
func Check(cfg Config) (*Result, error) {
	deps, err := moduleDeps(cfg)
	if err != nil {
		return nil, err
	}
	mode := packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedImports |
		packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo | packages.NeedTypesSizes
	pkgs, err := packages.Load(&packages.Config{Mode: mode, Dir: cfg.Dir, Overlay: cfg.Overlay, BuildFlags: cfg.buildFlags()}, deps...)
	if err != nil {
		return nil, fmt.Errorf("seamcheck: loading %s: %w", Package, err)
	}
	var errs []string
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			errs = append(errs, e.Error())
		}
	})
	if len(errs) > 0 {
		return nil, fmt.Errorf("seamcheck: %s does not type-check: %s", Package, strings.Join(errs, "; "))
	}
	prog, ssaPkgs := ssautil.Packages(pkgs, ssa.InstantiateGenerics)
	prog.Build()
	var nrt *ssa.Package
	for _, p := range ssaPkgs {
		if p != nil && p.Pkg.Path() == Package {
			nrt = p
		}
	}
	if nrt == nil {
		return nil, fmt.Errorf("seamcheck: %s was not built", Package)
	}
	cg := cha.CallGraph(prog)
	cg.DeleteSyntheticNodes()

	res := &Result{}
	for _, fn := range callbacks(nrt) {
		res.Callbacks = append(res.Callbacks, fn.Name())
		reached, v := walk(cg, fn)
		res.Reached += reached
		if v != nil {
			res.Violations = append(res.Violations, *v)
		}
	}
	sort.Strings(res.Callbacks)
	if len(res.Callbacks) == 0 {
		return nil, fmt.Errorf("seamcheck: %s has no //export functions: nothing to check", Package)
	}
	return res, nil
}

// moduleDeps is runtime/nrt and every package of this module it imports,
// the packages whose bodies are analysed.
func moduleDeps(cfg Config) ([]string, error) {
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedImports | packages.NeedDeps, Dir: cfg.Dir, Overlay: cfg.Overlay, BuildFlags: cfg.buildFlags()}, Package)
	if err != nil {
		return nil, fmt.Errorf("seamcheck: listing %s: %w", Package, err)
	}
	var out []string
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if p.PkgPath == Package || strings.HasPrefix(p.PkgPath, module) {
			out = append(out, p.PkgPath)
		}
	})
	sort.Strings(out)
	return out, nil
}

// callbacks are the //export functions: what C (libnccom through reverse.c,
// or the trampolines' log hook) calls into Go.
func callbacks(p *ssa.Package) []*ssa.Function {
	var out []*ssa.Function
	for _, m := range p.Members {
		fn, ok := m.(*ssa.Function)
		if !ok {
			continue
		}
		decl, ok := fn.Syntax().(*ast.FuncDecl)
		if !ok || decl.Doc == nil {
			continue
		}
		for _, c := range decl.Doc.List {
			if strings.HasPrefix(c.Text, "//export ") {
				out = append(out, fn)
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// forward tells whether fn is a forward entry point: the cgo stub of a
// C function forwardSymbol names.
func forward(fn *ssa.Function) bool {
	if fn.Pkg == nil || fn.Pkg.Pkg.Path() != Package {
		return false
	}
	name, ok := strings.CutPrefix(fn.Name(), "_Cfunc_")
	if !ok {
		return false
	}
	return forwardSymbol(name)
}

// readsSlots tells whether fn reads the slot table or the init-error
// sentinel directly (C.nrt_nccl_slots, C.nrt_nccl_init_error).
func readsSlots(fn *ssa.Function) bool {
	for _, b := range fn.Blocks {
		for _, in := range b.Instrs {
			for _, op := range in.Operands(nil) {
				if g, ok := (*op).(*ssa.Global); ok && strings.HasPrefix(g.Name(), "_Cvar_nrt_nccl_") {
					return true
				}
			}
		}
	}
	return false
}

// walk is a breadth-first search from root over call edges and over the
// functions a reached function takes the value of; it returns how many
// functions it reached and the first path to a forward entry point.
func walk(cg *callgraph.Graph, root *ssa.Function) (int, *Violation) {
	parent := map[*ssa.Function]*ssa.Function{root: nil}
	queue := []*ssa.Function{root}
	for len(queue) > 0 {
		fn := queue[0]
		queue = queue[1:]
		if forward(fn) || readsSlots(fn) {
			var path []string
			for f := fn; f != nil; f = parent[f] {
				path = append([]string{f.RelString(nil)}, path...)
			}
			return len(parent), &Violation{Callback: root.Name(), Path: path}
		}
		visit := func(next *ssa.Function) {
			if _, seen := parent[next]; !seen {
				parent[next] = fn
				queue = append(queue, next)
			}
		}
		if n := cg.Nodes[fn]; n != nil {
			for _, e := range n.Out {
				visit(e.Callee.Func)
			}
		}
		for _, f := range valuesTaken(fn) {
			visit(f)
		}
	}
	return len(parent), nil
}

// valuesTaken are the functions fn refers to other than by calling them:
// closures it makes and functions it passes as values.
func valuesTaken(fn *ssa.Function) []*ssa.Function {
	var out []*ssa.Function
	out = append(out, fn.AnonFuncs...)
	for _, b := range fn.Blocks {
		for _, in := range b.Instrs {
			var ops []ssa.Value
			if call, ok := in.(ssa.CallInstruction); ok {
				ops = call.Common().Args // the callee itself is an edge already
			} else {
				for _, op := range in.Operands(nil) {
					if op != nil {
						ops = append(ops, *op)
					}
				}
			}
			for _, op := range ops {
				switch v := op.(type) {
				case *ssa.Function:
					out = append(out, v)
				case *ssa.MakeClosure:
					out = append(out, v.Fn.(*ssa.Function))
				}
			}
		}
	}
	return out
}
