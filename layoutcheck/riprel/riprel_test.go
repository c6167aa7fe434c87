package elfread

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
)

func TestSlotReferenceDecoding(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	// A function that loads a global through %rip: RIPTargets must find the
	// global's address, as it finds a release trampoline's slot.
	dir := t.TempDir()
	src := "static void (*slot)(void);\n__attribute__((noinline)) void tramp(void) { slot(); }\nvoid set(void (*p)(void)) { slot = p; }\n"
	if err := os.WriteFile(filepath.Join(dir, "rip.c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cc.Shared(dir, "librip.so", "librip.so", "", []string{"rip.c"}, "-O1"); err != nil {
		t.Fatal(err)
	}
	obj, err := Open(filepath.Join(dir, "librip.so"))
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	syms, err := obj.File.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var tramp, slot uint64
	var size uint64
	for _, s := range syms {
		switch s.Name {
		case "tramp":
			tramp, size = s.Value, s.Size
		case "slot":
			slot = s.Value
		}
	}
	refs, err := RIPTargets(obj, tramp, size)
	if err != nil {
		t.Fatal(err)
	}
	if !refs[slot] {
		t.Fatalf("tramp at %#x: slot %#x not among its RIP-relative targets %v", tramp, slot, refs)
	}
}
