package gen

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path"
	"reflect"
	"text/template/parse"
)

// The C templates are Go template text, parsed by text/template/parse and run
// by the small executor below rather than by text/template. text/template
// calls methods by name through reflect, and a binary that can do that keeps
// every exported method of every type it links: 2.6 MB more in nrtabi, whose
// every command pays for it at start although only `nrtabi gen` renders a
// template. The C templates only read fields, so fields are all this executor
// reads; anything else is refused when the templates are parsed.

// cTemplateSet is the parsed templates by file name.
type cTemplateSet map[string]*parse.Tree

// cFuncs are the functions the templates may call.
var cFuncs = map[string]func(args []reflect.Value) (reflect.Value, error){
	"printf": func(args []reflect.Value) (reflect.Value, error) {
		if len(args) == 0 || args[0].Kind() != reflect.String {
			return reflect.Value{}, fmt.Errorf("printf wants a format string first")
		}
		rest := make([]any, len(args)-1)
		for i, a := range args[1:] {
			rest[i] = a.Interface()
		}
		return reflect.ValueOf(fmt.Sprintf(args[0].String(), rest...)), nil
	},
	"len": func(args []reflect.Value) (reflect.Value, error) {
		if len(args) != 1 {
			return reflect.Value{}, fmt.Errorf("len wants one argument")
		}
		switch v := indirect(args[0]); v.Kind() {
		case reflect.Array, reflect.Slice, reflect.Map, reflect.String:
			return reflect.ValueOf(v.Len()), nil
		default:
			return reflect.Value{}, fmt.Errorf("len of %s", v.Kind())
		}
	},
	"index": func(args []reflect.Value) (reflect.Value, error) {
		if len(args) != 2 {
			return reflect.Value{}, fmt.Errorf("index wants a slice and one index")
		}
		v, i := indirect(args[0]), indirect(args[1])
		if (v.Kind() != reflect.Slice && v.Kind() != reflect.Array) || !i.CanInt() {
			return reflect.Value{}, fmt.Errorf("index of %s by %s", v.Kind(), i.Kind())
		}
		if n := i.Int(); n < 0 || n >= int64(v.Len()) {
			return reflect.Value{}, fmt.Errorf("index %d out of range [0,%d)", n, v.Len())
		}
		return v.Index(int(i.Int())), nil
	},
	"eq": func(args []reflect.Value) (reflect.Value, error) {
		if len(args) != 2 {
			return reflect.Value{}, fmt.Errorf("eq wants two arguments")
		}
		a, b := indirect(args[0]), indirect(args[1])
		switch {
		case a.Kind() == reflect.String && b.Kind() == reflect.String:
			return reflect.ValueOf(a.String() == b.String()), nil
		case a.CanInt() && b.CanInt():
			return reflect.ValueOf(a.Int() == b.Int()), nil
		case a.Kind() == reflect.Bool && b.Kind() == reflect.Bool:
			return reflect.ValueOf(a.Bool() == b.Bool()), nil
		default:
			return reflect.Value{}, fmt.Errorf("eq of %s and %s", a.Kind(), b.Kind())
		}
	},
	"cstr": func(args []reflect.Value) (reflect.Value, error) {
		if len(args) != 1 || indirect(args[0]).Kind() != reflect.String {
			return reflect.Value{}, fmt.Errorf("cstr wants one string")
		}
		return reflect.ValueOf(cString(indirect(args[0]).String())), nil
	},
}

// parseCTemplates parses every file of fsys matching pattern and refuses a
// template that uses what the executor does not run.
func parseCTemplates(fsys fs.FS, pattern string) (cTemplateSet, error) {
	names, err := fs.Glob(fsys, pattern)
	if err != nil {
		return nil, err
	}
	funcs := map[string]any{}
	for name := range cFuncs {
		funcs[name] = true // parse only checks that the name is declared
	}
	set := cTemplateSet{}
	for _, name := range names {
		text, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		base := path.Base(name)
		trees, err := parse.Parse(base, string(text), "", "", funcs)
		if err != nil {
			return nil, err
		}
		if len(trees) != 1 {
			return nil, fmt.Errorf("%s: {{define}} is not supported; one template per file", base)
		}
		t := trees[base]
		if err := checkNodes(t, t.Root); err != nil {
			return nil, err
		}
		set[base] = t
	}
	return set, nil
}

// checkNodes refuses, at parse time, every node the executor cannot run.
func checkNodes(t *parse.Tree, n parse.Node) error {
	bad := func(what string) error {
		return fmt.Errorf("%s: %s is not supported by the C template executor", at(t, n), what)
	}
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := checkNodes(t, c); err != nil {
				return err
			}
		}
	case *parse.TextNode, *parse.CommentNode:
	case *parse.ActionNode:
		return checkPipe(t, n.Pipe)
	case *parse.IfNode:
		return checkBranch(t, &n.BranchNode)
	case *parse.RangeNode:
		if len(n.Pipe.Decl) > 0 {
			return bad("a range variable")
		}
		return checkBranch(t, &n.BranchNode)
	default:
		return bad(fmt.Sprintf("%T", n))
	}
	return nil
}

func checkBranch(t *parse.Tree, b *parse.BranchNode) error {
	if err := checkPipe(t, b.Pipe); err != nil {
		return err
	}
	if err := checkNodes(t, b.List); err != nil {
		return err
	}
	return checkNodes(t, b.ElseList)
}

func checkPipe(t *parse.Tree, p *parse.PipeNode) error {
	if len(p.Decl) > 0 {
		return fmt.Errorf("%s: variables are not supported by the C template executor", at(t, p))
	}
	for _, c := range p.Cmds {
		for _, a := range c.Args {
			switch a := a.(type) {
			case *parse.FieldNode, *parse.DotNode, *parse.StringNode, *parse.NumberNode, *parse.BoolNode, *parse.IdentifierNode:
			case *parse.VariableNode:
				if a.Ident[0] != "$" {
					return fmt.Errorf("%s: only $ (the data) is supported by the C template executor", at(t, a))
				}
			case *parse.PipeNode:
				if err := checkPipe(t, a); err != nil {
					return err
				}
			default:
				return fmt.Errorf("%s: %T is not supported by the C template executor", at(t, a), a)
			}
		}
	}
	return nil
}

// execute renders the named template with data.
func (s cTemplateSet) execute(name string, data any) ([]byte, error) {
	t, ok := s[name]
	if !ok {
		return nil, fmt.Errorf("no template %s", name)
	}
	root := reflect.ValueOf(data)
	e := &cExec{tree: t, root: root}
	var b bytes.Buffer
	if err := e.walk(&b, t.Root, root); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

type cExec struct {
	tree *parse.Tree
	root reflect.Value
}

func (e *cExec) errorf(n parse.Node, format string, args ...any) error {
	return fmt.Errorf("template %s: %s", at(e.tree, n), fmt.Sprintf(format, args...))
}

// at is a node's file:line:col.
func at(t *parse.Tree, n parse.Node) string {
	loc, _ := t.ErrorContext(n)
	return loc
}

func (e *cExec) walk(w io.Writer, n parse.Node, dot reflect.Value) error {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := e.walk(w, c, dot); err != nil {
				return err
			}
		}
	case *parse.TextNode:
		_, err := w.Write(n.Text)
		return err
	case *parse.CommentNode:
	case *parse.ActionNode:
		v, err := e.pipe(n.Pipe, dot)
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(w, indirect(v).Interface())
		return err
	case *parse.IfNode:
		v, err := e.pipe(n.Pipe, dot)
		if err != nil {
			return err
		}
		if truth(v) {
			return e.walk(w, n.List, dot)
		}
		return e.walk(w, n.ElseList, dot)
	case *parse.RangeNode:
		v, err := e.pipe(n.Pipe, dot)
		if err != nil {
			return err
		}
		switch v = indirect(v); v.Kind() {
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				if err := e.walk(w, n.List, v.Index(i)); err != nil {
					return err
				}
			}
			if v.Len() == 0 {
				return e.walk(w, n.ElseList, dot)
			}
		default:
			return e.errorf(n, "range over %s", v.Kind())
		}
	default:
		return e.errorf(n, "%T is not supported", n)
	}
	return nil
}

// pipe runs a pipeline: each command's result is the last argument of the next.
func (e *cExec) pipe(p *parse.PipeNode, dot reflect.Value) (reflect.Value, error) {
	var prev reflect.Value
	for i, c := range p.Cmds {
		v, err := e.command(c, dot, prev, i > 0)
		if err != nil {
			return reflect.Value{}, err
		}
		prev = v
	}
	return prev, nil
}

func (e *cExec) command(c *parse.CommandNode, dot, prev reflect.Value, piped bool) (reflect.Value, error) {
	if id, ok := c.Args[0].(*parse.IdentifierNode); ok {
		fn := cFuncs[id.Ident]
		args := make([]reflect.Value, 0, len(c.Args))
		for _, a := range c.Args[1:] {
			v, err := e.arg(a, dot)
			if err != nil {
				return reflect.Value{}, err
			}
			args = append(args, v)
		}
		if piped {
			args = append(args, prev)
		}
		v, err := fn(args)
		if err != nil {
			return reflect.Value{}, e.errorf(c, "%v", err)
		}
		return v, nil
	}
	if piped || len(c.Args) > 1 {
		return reflect.Value{}, e.errorf(c, "%s takes no arguments", c.Args[0])
	}
	return e.arg(c.Args[0], dot)
}

func (e *cExec) arg(n parse.Node, dot reflect.Value) (reflect.Value, error) {
	switch n := n.(type) {
	case *parse.DotNode:
		return dot, nil
	case *parse.FieldNode:
		return e.fields(n, dot, n.Ident)
	case *parse.VariableNode:
		return e.fields(n, e.root, n.Ident[1:])
	case *parse.StringNode:
		return reflect.ValueOf(n.Text), nil
	case *parse.BoolNode:
		return reflect.ValueOf(n.True), nil
	case *parse.NumberNode:
		if n.IsInt {
			return reflect.ValueOf(int(n.Int64)), nil
		}
		return reflect.Value{}, e.errorf(n, "only integer constants are supported")
	case *parse.PipeNode:
		return e.pipe(n, dot)
	default:
		return reflect.Value{}, e.errorf(n, "%T is not supported", n)
	}
}

// fields follows a chain of struct fields (never methods).
func (e *cExec) fields(n parse.Node, v reflect.Value, idents []string) (reflect.Value, error) {
	for _, id := range idents {
		s := indirect(v)
		if s.Kind() != reflect.Struct {
			return reflect.Value{}, e.errorf(n, "field %s of a %s", id, s.Kind())
		}
		f := s.FieldByName(id)
		if !f.IsValid() || !f.CanInterface() {
			return reflect.Value{}, e.errorf(n, "%s has no exported field %s", s.Type(), id)
		}
		v = f
	}
	return v, nil
}

// indirect follows pointers and interfaces to the value they hold.
func indirect(v reflect.Value) reflect.Value {
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && !v.IsNil() {
		v = v.Elem()
	}
	return v
}

// truth is text/template's: the zero value, an empty collection and nil are false.
func truth(v reflect.Value) bool {
	v = indirect(v)
	if !v.IsValid() {
		return false
	}
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() > 0
	case reflect.Struct:
		return true
	default:
		return !v.IsZero()
	}
}
