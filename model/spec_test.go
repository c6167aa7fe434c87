package model

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/spectest"
	"github.com/nrtabi/nrtabi/runtime/collectives"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
	"github.com/nrtabi/nrtabi/spec"
)

const defaultRelease = spec.Default

// runtimeMismatch compares the spec's tree and hypercube formulas with what
// runtime/collectives does: the hops of the AND-reduce (TreeRounds) and of
// the broadcast (CubeRounds) for every world of 1..64 ranks.
func runtimeMismatch(s *spec.Spec) error {
	parent, err := gen.Formulas(s, "ENC_SIG_TREE_PARENT", "r")
	if err != nil {
		return err
	}
	stop, err := gen.Formulas(s, "ENC_UID_CUBE_CLIMB_STOP", "n", "mask")
	if err != nil {
		return err
	}
	cubeParent, err := gen.Formulas(s, "ENC_UID_CUBE_PARENT", "r", "mask")
	if err != nil {
		return err
	}
	for n := int64(1); n <= 64; n++ {
		// the tree: the depth of rank n-1
		depth := 0
		for r := n - 1; r > 0 && depth <= 64; depth++ {
			p, err := parent[0].Eval(map[string]int64{"r": r})
			if err != nil {
				return err
			}
			r = p
		}
		if want := collectives.TreeRounds(int(n)); depth != want {
			return fmt.Errorf("n=%d: the spec's tree needs %d hops, runtime/collectives %d", n, depth, want)
		}
		// the hypercube: every rank reaches the root through its parents,
		// and the root fans out in as many steps as the runtime's rounds
		climb := func(x int64) (int64, error) {
			mask := int64(1)
			for x&mask == 0 && mask != 0 {
				mask <<= 1
				if c, err := stop[0].Eval(map[string]int64{"n": n, "mask": mask}); err != nil || c != 0 {
					return mask, err
				}
			}
			return mask, nil
		}
		for r := int64(1); r < n; r++ {
			h := 0
			for x := r; x != 0; h++ {
				mask, err := climb(x)
				if err != nil {
					return err
				}
				if x&mask == 0 || h > 64 {
					return fmt.Errorf("n=%d: rank %d never reaches the root of the hypercube", n, r)
				}
				if x, err = cubeParent[0].Eval(map[string]int64{"r": x, "mask": mask}); err != nil {
					return err
				}
			}
		}
		mask, err := climb(0)
		if err != nil {
			return err
		}
		hops := 0
		for step := mask >> 1; step != 0; step >>= 1 {
			if step < n {
				hops++
			}
		}
		if want := collectives.CubeRounds(int(n)); hops != want {
			return fmt.Errorf("n=%d: the spec's hypercube needs %d hops, runtime/collectives %d", n, hops, want)
		}
	}
	return nil
}

// The formulas the models are generated from are the ones the runtime runs.
func TestFormulasMatchRuntime(t *testing.T) {
	s, err := spec.Load(defaultRelease)
	if err != nil {
		t.Fatal(err)
	}
	if err := runtimeMismatch(s); err != nil {
		t.Error(err)
	}
}

// Changing a message size or the tree's arity in the spec and regenerating
// reaches the model check: spin rejects the model, or the model's formulas
// no longer match the runtime.
func TestSpecChangeReachesModel(t *testing.T) {
	needSpin(t)
	load := func(t *testing.T, file, old, repl string) *spec.Spec {
		dir := spectest.CopyRelease(t, spec.Embedded, defaultRelease)
		spectest.Replace(t, dir, file, old, repl)
		s, err := spec.LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	header := func(t *testing.T, s *spec.Spec) []byte {
		h, err := gen.PromelaHeader(s)
		if err != nil {
			t.Fatal(err)
		}
		base, err := os.ReadFile(gen.PromelaHeaderName(defaultRelease))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(h, base) {
			t.Fatal("the changed spec generated the same header")
		}
		return h
	}

	t.Run("sig message one byte short", func(t *testing.T) {
		s := load(t, "constants.toml", "name = \"ENC_SIG_MSG_SIZE\"\ntype = \"u32\"\nvalue = 17", "name = \"ENC_SIG_MSG_SIZE\"\ntype = \"u32\"\nvalue = 16")
		dir := workDir(t, header(t, s))
		// the ok byte falls off the wire: a world that agrees fails
		rejected(t, dir, "pernc.pml", "(fault!=0)||(result[i]==1)", "-DNRANKS=3")
	})
	t.Run("uid message one byte short", func(t *testing.T) {
		s := load(t, "constants.toml", "name = \"ENC_UID_MSG_SIZE\"\ntype = \"u32\"\nvalue = 129", "name = \"ENC_UID_MSG_SIZE\"\ntype = \"u32\"\nvalue = 128")
		dir := workDir(t, header(t, s))
		rejected(t, dir, "pernc.pml", "(fault!=0)||(result[i]==1)", "-DNRANKS=3")
	})
	t.Run("ternary children, binary parent", func(t *testing.T) {
		s := load(t, "constants.toml", `value = "2*r + 1, 2*r + 2"`, `value = "3*r + 1, 3*r + 2, 3*r + 3"`)
		dir := workDir(t, header(t, s))
		rejected(t, dir, "pernc.pml", "(c>=5)", "-DNRANKS=5")
	})
	t.Run("ternary tree", func(t *testing.T) {
		dir := spectest.CopyRelease(t, spec.Embedded, defaultRelease)
		spectest.Replace(t, dir, "constants.toml", `value = "2*r + 1, 2*r + 2"`, `value = "3*r + 1, 3*r + 2, 3*r + 3"`)
		spectest.Replace(t, dir, "constants.toml", `value = "(r - 1) >> 1"`, `value = "(r - 1) / 3"`)
		s, err := spec.LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		h := header(t, s)
		if !strings.Contains(string(h), "#define TREE_CHILDREN 3") {
			t.Errorf("the header does not carry the arity:\n%s", h)
		}
		// a consistent ternary tree is still a correct protocol (spin
		// accepts it), but not the one runtime/collectives runs
		holds(t, workDir(t, h), "pernc.pml", "-DNRANKS=5")
		err = runtimeMismatch(s)
		t.Logf("runtime check: %v", err)
		if err == nil {
			t.Error("a ternary tree in the spec matches the binary tree of runtime/collectives")
		}
	})
}

// hierMismatch evaluates the hierarchical bootstrap's formula rows for every
// world of 1..maxN ranks and every L of 1..maxN+1 and says where they do not
// fit together: the instances partition the world, each ring's next and prev
// are inverse and form one cycle, a rank receives at each step what its
// predecessor sends and only ever sends what it holds, and the step count is
// the three phases' sum (docs/models.md#tied-to-the-spec).
func hierMismatch(s *spec.Spec, maxN int64) error {
	rows := map[string][]string{
		"BOOTSTRAP_HIER_DISPATCH":         {"n", "l"},
		"BOOTSTRAP_HIER_INSTANCE":         {"r", "l"},
		"BOOTSTRAP_HIER_LOCAL":            {"r", "l"},
		"BOOTSTRAP_HIER_NINSTANCES":       {"n", "l"},
		"BOOTSTRAP_HIER_LEADER":           {"r", "l"},
		"BOOTSTRAP_HIER_LOCAL_N":          {"r", "n", "l"},
		"BOOTSTRAP_HIER_INTRA_NEXT":       {"r", "l", "k"},
		"BOOTSTRAP_HIER_INTRA_PREV":       {"r", "l", "k"},
		"BOOTSTRAP_HIER_INTRA_STEPS":      {"k"},
		"BOOTSTRAP_HIER_INTRA_SEND_SLICE": {"r", "i", "l", "k"},
		"BOOTSTRAP_HIER_INTRA_RECV_SLICE": {"r", "i", "l", "k"},
		"BOOTSTRAP_HIER_INTER_NEXT":       {"r", "n", "l"},
		"BOOTSTRAP_HIER_INTER_PREV":       {"r", "n", "l"},
		"BOOTSTRAP_HIER_INTER_STEPS":      {"n", "l"},
		"BOOTSTRAP_HIER_INTER_SEND_BLOCK": {"r", "i", "n", "l"},
		"BOOTSTRAP_HIER_INTER_RECV_BLOCK": {"r", "i", "n", "l"},
		"BOOTSTRAP_HIER_DOWN_HOPS":        {"k"},
		"BOOTSTRAP_HIER_STEPS":            {"n", "l"},
	}
	f := map[string]*gen.Formula{}
	for row, vars := range rows {
		es, err := gen.Formulas(s, row, vars...)
		if err != nil {
			return err
		}
		if len(es) != 1 {
			return fmt.Errorf("%s: one expression expected, found %d", row, len(es))
		}
		f[row] = es[0]
	}
	var evalErr error
	ev := func(row string, vars map[string]int64) int64 {
		v, err := f[row].Eval(vars)
		if err != nil && evalErr == nil {
			evalErr = fmt.Errorf("%s %v: %w", row, vars, err)
		}
		return v
	}
	for n := int64(1); n <= maxN; n++ {
		for l := int64(1); l <= maxN+1; l++ {
			if got, want := ev("BOOTSTRAP_HIER_DISPATCH", map[string]int64{"n": n, "l": l}) != 0, n > l; got != want {
				return fmt.Errorf("n=%d l=%d: dispatch says hierarchical=%v, the seed's root side %v", n, l, got, want)
			}
			h := ev("BOOTSTRAP_HIER_NINSTANCES", map[string]int64{"n": n, "l": l})
			var total int64
			for j := int64(0); j < h; j++ {
				total += ev("BOOTSTRAP_HIER_LOCAL_N", map[string]int64{"r": j * l, "n": n, "l": l})
			}
			if total != n {
				return fmt.Errorf("n=%d l=%d: %d instances holding %d ranks", n, l, h, total)
			}
			for r := int64(0); r < n; r++ {
				rl := map[string]int64{"r": r, "l": l}
				inst, local := ev("BOOTSTRAP_HIER_INSTANCE", rl), ev("BOOTSTRAP_HIER_LOCAL", rl)
				leader := ev("BOOTSTRAP_HIER_LEADER", rl)
				k := ev("BOOTSTRAP_HIER_LOCAL_N", map[string]int64{"r": r, "n": n, "l": l})
				if inst < 0 || inst >= h || leader != inst*l || leader+local != r || local >= k || k < 1 || k > l {
					return fmt.Errorf("n=%d l=%d rank %d: instance %d of %d, leader %d, local %d of %d", n, l, r, inst, h, leader, local, k)
				}
				rlk := map[string]int64{"r": r, "l": l, "k": k}
				next, prev := ev("BOOTSTRAP_HIER_INTRA_NEXT", rlk), ev("BOOTSTRAP_HIER_INTRA_PREV", rlk)
				if next < leader || next >= leader+k || prev < leader || prev >= leader+k ||
					ev("BOOTSTRAP_HIER_INTRA_PREV", map[string]int64{"r": next, "l": l, "k": k}) != r {
					return fmt.Errorf("n=%d l=%d rank %d: intra next %d, prev %d", n, l, r, next, prev)
				}
				steps := ev("BOOTSTRAP_HIER_INTRA_STEPS", map[string]int64{"k": k})
				held := map[int64]bool{local: true}
				for i := int64(0); i < steps; i++ {
					send := ev("BOOTSTRAP_HIER_INTRA_SEND_SLICE", map[string]int64{"r": r, "i": i, "l": l, "k": k})
					recv := ev("BOOTSTRAP_HIER_INTRA_RECV_SLICE", map[string]int64{"r": r, "i": i, "l": l, "k": k})
					sent := ev("BOOTSTRAP_HIER_INTRA_SEND_SLICE", map[string]int64{"r": prev, "i": i, "l": l, "k": k})
					if !held[send] || recv != sent {
						return fmt.Errorf("n=%d l=%d rank %d intra step %d: sends %d (holds %v), receives %d, its predecessor sends %d", n, l, r, i, send, held, recv, sent)
					}
					held[recv] = true
				}
				if int64(len(held)) != k {
					return fmt.Errorf("n=%d l=%d rank %d: the intra ring gathers %d of %d records", n, l, r, len(held), k)
				}
				if local != 0 {
					continue
				}
				rnl := map[string]int64{"r": r, "n": n, "l": l}
				onext, oprev := ev("BOOTSTRAP_HIER_INTER_NEXT", rnl), ev("BOOTSTRAP_HIER_INTER_PREV", rnl)
				if onext%l != 0 || onext >= n || oprev%l != 0 || oprev >= n ||
					ev("BOOTSTRAP_HIER_INTER_PREV", map[string]int64{"r": onext, "n": n, "l": l}) != r {
					return fmt.Errorf("n=%d l=%d leader %d: inter next %d, prev %d", n, l, r, onext, oprev)
				}
				blocks := map[int64]bool{inst: true}
				osteps := ev("BOOTSTRAP_HIER_INTER_STEPS", map[string]int64{"n": n, "l": l})
				for i := int64(0); i < osteps; i++ {
					v := map[string]int64{"r": r, "i": i, "n": n, "l": l}
					send, recv := ev("BOOTSTRAP_HIER_INTER_SEND_BLOCK", v), ev("BOOTSTRAP_HIER_INTER_RECV_BLOCK", v)
					sent := ev("BOOTSTRAP_HIER_INTER_SEND_BLOCK", map[string]int64{"r": oprev, "i": i, "n": n, "l": l})
					if !blocks[send] || recv != sent {
						return fmt.Errorf("n=%d l=%d leader %d inter step %d: sends block %d, receives %d, its predecessor sends %d", n, l, r, i, send, recv, sent)
					}
					blocks[recv] = true
				}
				if int64(len(blocks)) != h {
					return fmt.Errorf("n=%d l=%d leader %d: the inter ring gathers %d of %d blocks", n, l, r, len(blocks), h)
				}
			}
			if n%l == 0 {
				k := l
				sum := ev("BOOTSTRAP_HIER_INTRA_STEPS", map[string]int64{"k": k}) +
					ev("BOOTSTRAP_HIER_INTER_STEPS", map[string]int64{"n": n, "l": l}) +
					ev("BOOTSTRAP_HIER_DOWN_HOPS", map[string]int64{"k": k})
				if got := ev("BOOTSTRAP_HIER_STEPS", map[string]int64{"n": n, "l": l}); got != sum {
					return fmt.Errorf("n=%d l=%d: BOOTSTRAP_HIER_STEPS is %d, the phases add up to %d", n, l, got, sum)
				}
			}
			if evalErr != nil {
				return evalErr
			}
		}
	}
	return evalErr
}

// The hierarchical rows fit together for every world up to 32 ranks and
// every L up to 33 (64 takes half a minute of map-driven Eval).
func TestHierFormulas(t *testing.T) {
	s, err := spec.Load(defaultRelease)
	if err != nil {
		t.Fatal(err)
	}
	if err := hierMismatch(s, 32); err != nil {
		t.Error(err)
	}
}

// Each planted change to a hierarchical row is caught by hierMismatch, and
// the truncating instance count by spin as well.
func TestHierSpecChange(t *testing.T) {
	for _, c := range []struct{ old, repl string }{
		{`value = "(n + l - 1) / l"`, `value = "n / l"`},                                       // drops a short last instance
		{`value = "(r / l) * l + (r % l + 1) % k"`, `value = "(r / l) * l + (r % l + 1) % l"`}, // ring of l in a short instance
		{`value = "(r % l - i + k) % k"`, `value = "(r % l + i) % k"`},                         // wrong slice
		{`value = "n > l"`, `value = "n != 0"`},                                                // the init side's garbled reading
		{`value = "(l - 1) + ((n + l - 1) / l - 1) + (l - 1)"`, `value = "(l - 1) + ((n + l - 1) / l - 1)"`},
	} {
		t.Run(c.repl, func(t *testing.T) {
			dir := spectest.CopyRelease(t, spec.Embedded, defaultRelease)
			spectest.Replace(t, dir, "bootstrap_hierarchy.toml", c.old, c.repl)
			s, err := spec.LoadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			err = hierMismatch(s, 16)
			t.Logf("caught: %v", err)
			if err == nil {
				t.Errorf("%s -> %s: the hierarchical formulas still fit together", c.old, c.repl)
			}
		})
	}
	t.Run("spin", func(t *testing.T) {
		needSpin(t)
		dir := spectest.CopyRelease(t, spec.Embedded, defaultRelease)
		spectest.Replace(t, dir, "bootstrap_hierarchy.toml", `value = "(n + l - 1) / l"`, `value = "n / l"`)
		s, err := spec.LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		h, err := gen.PromelaHeader(s)
		if err != nil {
			t.Fatal(err)
		}
		// the short last instance is never reached: ranks succeed without its record
		rejected(t, workDir(t, h), "hier.pml", "have==((1<<3)-1)", hierDefs(3, 2)...)
	})
}

// The spec's dispatch row is the one the Go bootstrap runs
// (tcp.Hierarchical, on a global init; contradiction bootstrap-dispatch).
func TestHierDispatchMatchesRuntime(t *testing.T) {
	s, err := spec.Load(defaultRelease)
	if err != nil {
		t.Fatal(err)
	}
	es, err := gen.Formulas(s, "BOOTSTRAP_HIER_DISPATCH", "n", "l")
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 128; n++ {
		for l := 1; l <= 130; l++ {
			v, err := es[0].Eval(map[string]int64{"n": int64(n), "l": int64(l)})
			if err != nil {
				t.Fatal(err)
			}
			if got := tcp.Hierarchical(true, n, l); got != (v != 0) {
				t.Fatalf("n=%d l=%d: the spec says hierarchical=%v, runtime/transport/tcp %v", n, l, v != 0, got)
			}
		}
	}
}
