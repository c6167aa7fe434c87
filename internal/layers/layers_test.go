package layers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestImportLayers: every import between the module's packages, test files
// and files behind build tags included, is one the table allows.
func TestImportLayers(t *testing.T) {
	pkgs, edges := loadGraph(t)
	for _, v := range check(rules, pkgs, edges) {
		t.Error(v)
	}
}

// TestRulesHaveNoSlack: the table allows nothing the module does not do, so
// it stays the picture of the house and not a list of what once was.
func TestRulesHaveNoSlack(t *testing.T) {
	for _, v := range malformed(rules) {
		t.Error(v)
	}
	pkgs, edges := loadGraph(t)
	for _, v := range slack(rules, pkgs, edges) {
		t.Error(v)
	}
}

// TestCheckerCatchesUpwardImports: a graph with planted upward imports (the
// spec importing the generator, layoutcheck importing release outside its
// tests, the runtime importing its builder, the pure-Go CLI the runtime, a
// package in no room) is reported edge by edge; the allowed edges around
// them are not.
func TestCheckerCatchesUpwardImports(t *testing.T) {
	pkgs := []string{"spec", "gen", "layoutcheck", "readers/elfread", "release", "runtime/nrt", "runtime/builder", "cmd/nrtabi", "stray"}
	edges := []edge{
		{from: "gen", to: "spec"},
		{from: "release", to: "readers/elfread"},
		{from: "layoutcheck", to: "release", test: true},
		{from: "runtime/nrt", to: "runtime/builder", test: true},
		{from: "cmd/nrtabi", to: "release"},
		// Planted.
		{from: "spec", to: "gen"},
		{from: "layoutcheck", to: "release"},
		{from: "readers/elfread", to: "spec"},
		{from: "runtime/nrt", to: "runtime/builder"},
		{from: "cmd/nrtabi", to: "runtime/nrt"},
		{from: "release", to: "cmd/nrtabi", test: true},
	}
	got := check(rules, pkgs, edges)
	want := []string{
		"cmd/nrtabi imports runtime/nrt: room cmd/nrtabi",
		"layoutcheck imports release: room layoutcheck",
		"readers/elfread imports spec: room readers/elfread",
		"release imports in its tests cmd/nrtabi: room release",
		"runtime/nrt imports runtime/builder: room runtime",
		"spec imports gen: room spec",
		"stray is in no room",
	}
	if len(got) != len(want) {
		t.Fatalf("want %d reports, got %d:\n%s", len(want), len(got), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("report %d: want %q..., got %q", i, want[i], got[i])
		}
	}
}

// TestSlackCaught: an entry nothing uses, a may entry only tests use, and a
// room with no package are each reported.
func TestSlackCaught(t *testing.T) {
	table := []rule{
		{room: "spec", why: "floor"},
		{room: "gen", may: []string{"spec", "internal/cc"}, why: "x"},
		{room: "gone", may: []string{"spec"}, why: "x"},
	}
	got := slack(table, []string{"spec", "gen"}, []edge{{from: "gen", to: "spec"}, {from: "gen", to: "internal/cc", test: true}})
	want := []string{
		"room gen may import internal/cc, but no non-test file there does",
		"room gone holds no package",
	}
	if len(got) != len(want) {
		t.Fatalf("want %d reports, got %d:\n%s", len(want), len(got), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("report %d: want %q..., got %q", i, want[i], got[i])
		}
	}
	if bad := malformed([]rule{{room: "a/", why: "x"}, {room: "b", tests: []string{"!c"}}, {room: "b", why: "x"}}); len(bad) != 4 {
		t.Errorf("want 4 malformed rows reported (unclean room, refusal in tests, no why, a room twice), got %q", bad)
	}
}

// TestEveryPackageHasDoc: every package of the module says its one job in
// a package comment (`go doc` shows it), test-only ones such as docs too.
func TestEveryPackageHasDoc(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	out, err := goCmd(ctx, moduleRoot(ctx, t), "list", "-f", "{{if not .Doc}}{{.ImportPath}}{{end}}", "./...")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Fields(string(out)) {
		t.Errorf("%s has no package comment; add one saying the package's one job", p)
	}
}

// goList is the part of `go list -json` the graph needs.
type goList struct {
	ImportPath, Dir                    string
	Imports, TestImports, XTestImports []string
	IgnoredGoFiles                     []string
	Module                             *struct{ Path string }
	Error                              *struct{ Err string }
}

// maxListOutput bounds what `go list` may print: the module's packages take
// well under a megabyte.
const maxListOutput = 64 << 20

// loadGraph lists the module's packages and every import between them:
// `go list` for the files the default build reads, and the import lines of
// the files it leaves out (other build tags, other systems), so a tagged
// file cannot import upward unseen.
func loadGraph(t *testing.T) (pkgs []string, edges []edge) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	out, err := goCmd(ctx, moduleRoot(ctx, t), "list", "-json", "./...")
	if err != nil {
		t.Fatal(err)
	}
	var list []goList
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p goList
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list -json: %v", err)
		}
		if p.Error != nil {
			t.Fatalf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		if p.Module == nil {
			t.Fatalf("go list: %s is in no module", p.ImportPath)
		}
		list = append(list, p)
	}
	if len(list) == 0 {
		t.Fatal("go list ./... listed no package")
	}
	module := list[0].Module.Path
	rel := func(path string) (string, bool) {
		if !within(module, path) {
			return "", false
		}
		return strings.TrimPrefix(strings.TrimPrefix(path, module), "/"), true
	}
	seen := map[edge]bool{}
	add := func(from, to string, test bool) {
		if r, ok := rel(to); ok {
			e := edge{from: from, to: r, test: test}
			if !seen[e] {
				seen[e] = true
				edges = append(edges, e)
			}
		}
	}
	for _, p := range list {
		from, ok := rel(p.ImportPath)
		if !ok {
			t.Fatalf("go list ./... listed %s, outside module %s", p.ImportPath, module)
		}
		pkgs = append(pkgs, from)
		for _, to := range p.Imports {
			add(from, to, false)
		}
		for _, to := range append(p.TestImports, p.XTestImports...) {
			add(from, to, true)
		}
		for _, name := range p.IgnoredGoFiles {
			imports, err := fileImports(filepath.Join(p.Dir, name))
			if err != nil {
				t.Fatal(err)
			}
			for _, to := range imports {
				add(from, to, strings.HasSuffix(name, "_test.go"))
			}
		}
	}
	return pkgs, edges
}

// moduleRoot is the directory of the module's go.mod.
func moduleRoot(ctx context.Context, t *testing.T) string {
	t.Helper()
	root, err := goCmd(ctx, "", "env", "GOMOD")
	if err != nil {
		t.Fatal(err)
	}
	gomod := strings.TrimSpace(string(root))
	if gomod == "" || gomod == "/dev/null" {
		t.Fatalf("go env GOMOD: %q is not a module; run the test inside the module", gomod)
	}
	return filepath.Dir(gomod)
}

// fileImports is the import paths of one Go file.
func fileImports(path string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
	if err != nil {
		return nil, fmt.Errorf("reading the imports of a file go list left out: %w", err)
	}
	var out []string
	for _, spec := range f.Imports {
		p, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: import %s: %w", path, spec.Path.Value, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// goCmd runs the go command in dir and returns its output, bounded.
func goCmd(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	stdout, stderr := &capped{max: maxListOutput}, &capped{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.buf.String()))
	}
	if stdout.over {
		return nil, fmt.Errorf("go %s: more than %d bytes of output", strings.Join(args, " "), stdout.max)
	}
	return stdout.buf.Bytes(), nil
}

// capped keeps the first max bytes written to it and drops the rest; it
// never refuses a write, which would leave the child blocked on a full pipe
// until the deadline.
type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); len(p) > room {
		c.buf.Write(p[:max(room, 0)])
		c.over = true
		return len(p), nil
	}
	return c.buf.Write(p)
}
