package riprel

import (
	"slices"
	"testing"
)

// TestStoredImmediates: the probe's store of the id into its out-argument
// is found; a stack store and a store at another offset, planted beside
// it, are not taken for it.
func TestStoredImmediates(t *testing.T) {
	code := []byte{
		0x48, 0xc7, 0x44, 0x24, 0x30, 0x01, 0x00, 0x00, 0x00, // movq $0x1,0x30(%rsp): the stack's
		0x48, 0xc7, 0x40, 0x28, 0x07, 0x00, 0x00, 0x00, // movq $0x7,0x28(%rax): another field
		0x48, 0xc7, 0x40, 0x30, 0x59, 0x00, 0x00, 0x00, // movq $0x59,0x30(%rax): the id
		0xc3, // ret
	}
	got, err := StoredImmediates(code, 0x30)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []uint64{0x59}) {
		t.Fatalf("stores at 0x30 = %#x, want [0x59]", got)
	}
	if got, _ := StoredImmediates(code, 0x28); !slices.Equal(got, []uint64{7}) {
		t.Fatalf("stores at 0x28 = %#x, want [0x7]", got)
	}
	if _, err := StoredImmediates(nil, 0x30); err == nil {
		t.Fatal("empty code decoded without an error")
	}
}
