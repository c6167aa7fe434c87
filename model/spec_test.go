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
