package gen

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/spectest"
	"github.com/nrtabi/nrtabi/spec"
)

// cyclicStructs declares a struct that points at itself and two that point
// at each other: Go refuses package-level initialisers that refer to
// themselves, so the compiled form must close these cycles in link.
const cyclicStructs = `
[[struct]]
name = "list_node"
size = 16
side = "libnrt"
conf = "HIGH"
source = "test: a linked list"

  [[struct.field]]
  name = "next"
  offset = 0
  type = "list_node*"
  conf = "HIGH"
  source = "test"

  [[struct.field]]
  name = "ring"
  offset = 8
  type = "ring_b*"
  conf = "HIGH"
  source = "test"

[[struct]]
name = "ring_b"
size = 8
side = "libnrt"
conf = "HIGH"
source = "test: points back"

  [[struct.field]]
  name = "back"
  offset = 0
  type = "list_node*"
  conf = "HIGH"
  source = "test"
`

// TestCompiledCycles: a release whose structs refer to each other compiles
// to package-level variables without an initialisation cycle, and the link
// function sets the references that would close one.
func TestCompiledCycles(t *testing.T) {
	dir := spectest.CopyRelease(t, spec.Embedded, spec.Default)
	if err := os.WriteFile(filepath.Join(dir, "zz_cycles.toml"), []byte(cyclicStructs), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := spec.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString("package compiled\n")
	if err := compileRelease(&b, s); err != nil {
		t.Fatal(err)
	}
	if cycle := initCycle(t, b.String()); cycle != "" {
		t.Fatalf("the compiled release has an initialisation cycle: %s", cycle)
	}
	link := b.String()[strings.Index(b.String(), "func link_"):]
	if n := strings.Count(link, ".Struct = &struct_"); n != 2 {
		t.Fatalf("link sets %d struct references; want 2 (list_node's own, and the one that closes list_node -> ring_b -> list_node):\n%s", n, link)
	}
}

// TestInitCycleCheck: the check TestCompiledCycles relies on finds a cycle
// when there is one.
func TestInitCycleCheck(t *testing.T) {
	src := "package spec\nvar a = T{p: &b}\nvar b = T{p: &c[1]}\nvar c = [2]T{{}, {p: &a}}\nvar d = T{p: &a}\n"
	if cycle := initCycle(t, src); cycle == "" {
		t.Fatal("a -> b -> c -> a not found")
	}
	if cycle := initCycle(t, "package spec\nvar a = T{p: &b}\nvar b = T{}\n"); cycle != "" {
		t.Fatalf("found a cycle where there is none: %s", cycle)
	}
}

// initCycle names a cycle among the package-level variables of src whose
// initialisers refer to one another, as Go would refuse it; "" when none.
func initCycle(t *testing.T, src string) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "z.go", src, 0)
	if err != nil {
		t.Fatalf("the compiled release does not parse: %v", err)
	}
	refs := map[string][]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, sp := range g.Specs {
			vs := sp.(*ast.ValueSpec)
			for i, n := range vs.Names {
				refs[n.Name] = nil
				if i < len(vs.Values) {
					ast.Inspect(vs.Values[i], func(x ast.Node) bool {
						if id, ok := x.(*ast.Ident); ok {
							refs[n.Name] = append(refs[n.Name], id.Name)
						}
						return true
					})
				}
			}
		}
	}
	state := map[string]int{} // 1 visiting, 2 done
	var stack []string
	var visit func(string) string
	visit = func(v string) string {
		state[v] = 1
		stack = append(stack, v)
		for _, r := range refs[v] {
			if _, isVar := refs[r]; !isVar {
				continue
			}
			switch state[r] {
			case 1:
				return strings.Join(append(stack, r), " -> ")
			case 0:
				if c := visit(r); c != "" {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[v] = 2
		return ""
	}
	for v := range refs {
		if state[v] == 0 {
			if c := visit(v); c != "" {
				return c
			}
		}
	}
	return ""
}
