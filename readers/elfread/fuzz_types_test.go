package elfread

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/typemodel"
)

// FuzzTypes feeds mutated real objects (FuzzReader's corpus: DWARF 4 and
// 5, compressed, dwz, split units) to the type front end: the whole graph
// on two workers (AllTypes), then the lazy one (At of every struct
// FindStructs and ScanAll find) on a fresh Debug, then every walk of the
// model over what they built. Each step ends with a graph or a one-line
// *InputError, within seconds; a panic or a hang fails the run.
func FuzzTypes(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzReader", "*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range seeds {
		if b, err := readFuzzSeed(p); err == nil {
			f.Add(b)
		}
	}
	// A C++ object of this compiler (bases, references, pointers to
	// members, nested classes, templates), when it has g++.
	if out, err := cc.Output("-print-prog-name=cc1plus"); err == nil && filepath.IsAbs(out) {
		if b, err := os.ReadFile(cxxObject(f)); err == nil {
			f.Add(b)
		}
		// A C unit with nested definitions, which the one pass indexes
		// by its walk.
		if b, err := os.ReadFile(nestedCObject(f, f.TempDir())); err == nil {
			f.Add(b)
		}
	}
	noDebug := []string{filepath.Join(f.TempDir(), "no-debug-dir")}
	f.Fuzz(func(t *testing.T, data []byte) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			fuzzTypesOnce(t, data, noDebug)
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the type front end did not finish in 20 s")
		}
	})
}

func fuzzTypesOnce(t *testing.T, data []byte, noDebug []string) {
	oneLine := func(what string, err error) bool {
		if err == nil {
			return true
		}
		var ie *InputError
		if strings.Contains(err.Error(), "\n") || !errors.As(err, &ie) {
			t.Errorf("%s: want nil or a one-line *InputError, got %T %q", what, err, err)
		}
		return false
	}
	open := func() *Debug {
		o, err := NewFile(bytes.NewReader(data))
		if err != nil {
			return nil
		}
		// AllowMissing: a dwz'd seed without its supplement, a skeleton
		// without its .dwo, still reach the front end.
		d, err := FindDebug(context.Background(), o, Lookup{Dirs: noDebug, AllowMissing: true})
		if err != nil {
			o.Close()
			return nil
		}
		d.ownsInput = true
		return d
	}
	d := open()
	if d == nil {
		return
	}
	defer d.Close()
	g, err := d.AllTypes(context.Background(), 2)
	graph := ""
	if oneLine("all types", err) {
		g.each(func(_ uint64, n *typemodel.Type) { walkModel(t, n) })
		graph = dumpGraph(g)
	}
	lazy := open()
	if lazy == nil {
		return
	}
	defer lazy.Close()
	found, err := lazy.FindStructs([][]string{{"hostile"}, {"outer"}, {"inner"}})
	if !oneLine("find structs", err) {
		return
	}
	idx, err := lazy.ScanAll(context.Background(), 1)
	if oneLine("scan all", err) {
		for _, n := range idx.Types[:min(len(idx.Types), 16)] {
			found = append(found, &n.Found)
		}
		if graph != "" {
			// What ScanAll and AllTypes both accept, the one pass gives
			// alike (docs/layoutcheck.md#one-pass-over-the-units).
			if one := open(); one != nil {
				defer one.Close()
				oidx, og, err := one.ScanAllTypes(context.Background(), 2)
				if err != nil {
					t.Errorf("the one pass failed where ScanAll and AllTypes did not: %v", err)
				} else if want, got := renderIndex(idx)+graph, renderIndex(oidx)+dumpGraph(og); got != want {
					t.Errorf("the one pass differs from ScanAll then AllTypes at %s", firstDiff(want, got))
				}
			}
		}
	}
	for _, fd := range found {
		if fd == nil {
			continue
		}
		n, err := lazy.Types().At(fd.Offset)
		if oneLine("at", err) {
			walkModel(t, n)
		}
	}
}

// walkModel runs the model's walks over a node and its members: each ends,
// and a spelling stays short.
func walkModel(t *testing.T, n *typemodel.Type) {
	check := func(x *typemodel.Type, name string) {
		if s := typemodel.Decl(x, name); len(s) > 1<<16 {
			t.Fatalf("a type spelled in %d bytes", len(s))
		}
		typemodel.SizeOf(x)
		typemodel.AlignOf(x)
		typemodel.EmptyClass(x)
		typemodel.Typedefs(x)
	}
	check(n, "v")
	typemodel.StructAlign(n)
	for i := range n.Fields {
		check(n.Fields[i].Type, n.Fields[i].Name)
		n.Fields[i].End()
	}
}

// readFuzzSeed reads a []byte seed of a "go test fuzz v1" corpus file.
func readFuzzSeed(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	_, body, ok := strings.Cut(string(b), "\n")
	body = strings.TrimSpace(body)
	if !ok || !strings.HasPrefix(body, "[]byte(") || !strings.HasSuffix(body, ")") {
		return nil, errors.New("not a []byte seed")
	}
	s, err := strconv.Unquote(body[len("[]byte(") : len(body)-1])
	return []byte(s), err
}
