package riprel_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/readers/riprel"
)

// TestSlotReferenceDecoding: a function that loads a global through %rip:
// Targets finds the global's address, as it finds a release trampoline's
// slot.
func TestSlotReferenceDecoding(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	src := "static void (*slot)(void);\n__attribute__((noinline)) void tramp(void) { slot(); }\nvoid set(void (*p)(void)) { slot = p; }\n"
	if err := os.WriteFile(filepath.Join(dir, "rip.c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cc.Shared(dir, "librip.so", "librip.so", "", []string{"rip.c"}, "-O1"); err != nil {
		t.Fatal(err)
	}
	obj, err := elfread.Open(filepath.Join(dir, "librip.so"))
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
	refs, err := riprel.Targets(elfread.FunctionBytes(obj, tramp, size), tramp)
	if err != nil {
		t.Fatal(err)
	}
	if !refs[slot] {
		t.Fatalf("tramp at %#x: slot %#x not among its RIP-relative targets %v", tramp, slot, refs)
	}
}

// TestTargetsBounds: no code, or more than MaxCode, is refused by size.
func TestTargetsBounds(t *testing.T) {
	for _, n := range []int{0, riprel.MaxCode + 1} {
		if _, err := riprel.Targets(make([]byte, n), 0x1000); err == nil {
			t.Errorf("%d bytes: want a refusal", n)
		}
	}
	// mov 0x10(%rip),%rax at 0x1000: the operand is 0x1000+7+0x10.
	refs, err := riprel.Targets([]byte{0x48, 0x8b, 0x05, 0x10, 0, 0, 0}, 0x1000)
	if err != nil || len(refs) != 1 || !refs[0x1017] {
		t.Fatalf("mov 0x10(%%rip): %v %v", refs, err)
	}
}
