package gen

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The spec writes the shapes of the bootstrap exchanges (the tree's parent
// and children, the hypercube's climb, the ring's neighbours and slices) as
// small C expressions over a few named integers. parseExpr parses them with C's
// precedence, so that the generator can emit them as Promela macros and Go
// can evaluate them against the runtime.

// maxExprLen and maxExprDepth bound what a spec row may ask of the parser.
const (
	maxExprLen   = 256
	maxExprDepth = 32
)

// Formula is a parsed expression: a number, a variable, or an operator applied
// to one or two operands.
type Formula struct {
	op   string // "" for a leaf
	num  int64
	name string
	x, y *Formula
}

// binary operators by precedence level, loosest first (C's order).
var exprLevels = [][]string{
	{"|"}, {"^"}, {"&"}, {"==", "!="}, {"<=", ">=", "<", ">"}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "%"},
}

// exprTwoCharOp reports whether op is a two-character operator (a switch,
// not a map built at init: docs/benchmarks.md#start-up-2026-12-04).
func exprTwoCharOp(op string) bool {
	switch op {
	case "<<", ">>", "<=", ">=", "==", "!=":
		return true
	}
	return false
}

type exprParser struct {
	toks  []string
	pos   int
	vars  map[string]bool
	depth int
}

// parseExpr parses src, which may name only the variables in vars.
func parseExpr(src string, vars ...string) (*Formula, error) {
	if len(src) > maxExprLen {
		return nil, fmt.Errorf("expression of %d bytes is longer than %d", len(src), maxExprLen)
	}
	toks, err := exprTokens(src)
	if err != nil {
		return nil, err
	}
	p := &exprParser{toks: toks, vars: map[string]bool{}}
	for _, v := range vars {
		p.vars[v] = true
	}
	e, err := p.binary(0)
	if err != nil {
		return nil, err
	}
	if p.pos != len(p.toks) {
		return nil, fmt.Errorf("unexpected %q after a complete expression", p.toks[p.pos])
	}
	return e, nil
}

func exprTokens(src string) ([]string, error) {
	var toks []string
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && src[j] >= '0' && src[j] <= '9' {
				j++
			}
			toks = append(toks, src[i:j])
			i = j
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_':
			j := i
			for j < len(src) && (src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] == '_' || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			toks = append(toks, src[i:j])
			i = j
		case i+1 < len(src) && exprTwoCharOp(src[i:i+2]):
			toks = append(toks, src[i:i+2])
			i += 2
		case strings.IndexByte("+-*/%&|^~()<>", c) >= 0:
			toks = append(toks, src[i:i+1])
			i++
		default:
			return nil, fmt.Errorf("unexpected character %q", c)
		}
	}
	return toks, nil
}

func (p *exprParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *exprParser) binary(level int) (*Formula, error) {
	if level == len(exprLevels) {
		return p.unary()
	}
	x, err := p.binary(level + 1)
	if err != nil {
		return nil, err
	}
	for {
		op := p.peek()
		found := false
		for _, o := range exprLevels[level] {
			found = found || o == op
		}
		if !found {
			return x, nil
		}
		p.pos++
		y, err := p.binary(level + 1)
		if err != nil {
			return nil, err
		}
		x = &Formula{op: op, x: x, y: y}
	}
}

func (p *exprParser) unary() (*Formula, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxExprDepth {
		return nil, fmt.Errorf("expression nests deeper than %d", maxExprDepth)
	}
	t := p.peek()
	switch {
	case t == "":
		return nil, fmt.Errorf("expression ends where an operand is due")
	case t == "-" || t == "~":
		p.pos++
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &Formula{op: "u" + t, x: x}, nil
	case t == "(":
		p.pos++
		x, err := p.binary(0)
		if err != nil {
			return nil, err
		}
		if p.peek() != ")" {
			return nil, fmt.Errorf("missing ) where %q is", p.peek())
		}
		p.pos++
		return x, nil
	case t[0] >= '0' && t[0] <= '9':
		p.pos++
		n, err := strconv.ParseInt(t, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("number %s: %w", t, err)
		}
		return &Formula{num: n}, nil
	case p.vars[t]:
		p.pos++
		return &Formula{name: t}, nil
	}
	return nil, fmt.Errorf("unexpected %q (the variables here are %s)", t, p.varList())
}

func (p *exprParser) varList() string {
	var vs []string
	for v := range p.vars {
		vs = append(vs, v)
	}
	sort.Strings(vs)
	return strings.Join(vs, ", ")
}

// promela writes e fully parenthesised, each variable as the macro
// parameter of the same name.
func (e *Formula) promela() string {
	switch {
	case e.op == "" && e.name != "":
		return "(" + e.name + ")"
	case e.op == "":
		return strconv.FormatInt(e.num, 10)
	case e.op[0] == 'u':
		return "(" + e.op[1:] + e.x.promela() + ")"
	}
	return "(" + e.x.promela() + " " + e.op + " " + e.y.promela() + ")"
}

// Eval computes e with C's int semantics for the values in env.
func (e *Formula) Eval(env map[string]int64) (int64, error) {
	if e.op == "" {
		if e.name != "" {
			return env[e.name], nil
		}
		return e.num, nil
	}
	x, err := e.x.Eval(env)
	if err != nil {
		return 0, err
	}
	switch e.op {
	case "u-":
		return -x, nil
	case "u~":
		return ^x, nil
	}
	y, err := e.y.Eval(env)
	if err != nil {
		return 0, err
	}
	b := func(c bool) int64 {
		if c {
			return 1
		}
		return 0
	}
	switch e.op {
	case "+":
		return x + y, nil
	case "-":
		return x - y, nil
	case "*":
		return x * y, nil
	case "/", "%":
		if y == 0 {
			return 0, fmt.Errorf("division by zero")
		}
		if e.op == "/" {
			return x / y, nil
		}
		return x % y, nil
	case "<<", ">>":
		if y < 0 || y > 62 {
			return 0, fmt.Errorf("shift by %d", y)
		}
		if e.op == "<<" {
			return x << y, nil
		}
		return x >> y, nil
	case "&":
		return x & y, nil
	case "|":
		return x | y, nil
	case "^":
		return x ^ y, nil
	case "==":
		return b(x == y), nil
	case "!=":
		return b(x != y), nil
	case "<":
		return b(x < y), nil
	case "<=":
		return b(x <= y), nil
	case ">":
		return b(x > y), nil
	case ">=":
		return b(x >= y), nil
	}
	return 0, fmt.Errorf("unknown operator %s", e.op)
}
