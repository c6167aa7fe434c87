package layoutcheck

import (
	"bytes"
	"context"
	"debug/elf"
	"math/rand"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/readers/elfread"
)

// TestBadInputs: inputs that are not what they claim give one-line input
// errors naming the file, never a panic.
func TestBadInputs(t *testing.T) {
	f := loadFixtures(t)
	good, err := os.ReadFile(f.libnrt)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.NewFile(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	info := ef.Section(".debug_info")
	garbled := append([]byte(nil), good...)
	for i := info.Offset; i < info.Offset+info.FileSize; i++ {
		garbled[i] = 0xff
	}
	stripped := filepath.Join(t.TempDir(), "stripped.so")
	objcopy(t, "--strip-debug", f.libnrt, stripped)
	strippedBytes, err := os.ReadFile(stripped)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"text", []byte("#!/bin/sh\necho not an ELF\n"), "not an ELF file"},
		{"empty", nil, "not an ELF file"},
		{"header-only", good[:64], "truncated"},
		{"half", good[:len(good)/2], "truncated"},
		{"garbled-dwarf", garbled, "corrupted DWARF"},
		{"no-dwarf", strippedBytes, "no DWARF anywhere"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.name)
			if err := os.WriteFile(p, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Check(context.Background(), []string{p}, Options{Spec: f.sp, DebugDirs: []string{dir}})
			ie, ok := err.(*elfread.InputError)
			if !ok {
				t.Fatalf("want *InputError, got %T %v", err, err)
			}
			if !strings.Contains(ie.Msg, c.want) || ie.Path != p || strings.Contains(err.Error(), "\n") {
				t.Fatalf("want one line naming %s and saying %q, got %q", p, c.want, err)
			}
		})
	}
	if _, err := Check(context.Background(), []string{dir}, Options{Spec: f.sp}); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Fatalf("a directory: %v", err)
	}
	if _, err := Check(context.Background(), []string{filepath.Join(dir, "missing")}, Options{Spec: f.sp}); err == nil || !strings.Contains(err.Error(), "cannot open") {
		t.Fatalf("a missing file: %v", err)
	}
}

// TestCorruptedBytesNeverPanic flips random bytes of a real shared object
// (headers, dynamic table, DWARF) and checks each result: a report or an
// input error, never a panic or another error type.
func TestCorruptedBytesNeverPanic(t *testing.T) {
	f := loadFixtures(t)
	good, err := os.ReadFile(f.libnrt)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(4))
	dir := t.TempDir()
	reports, inputErrs := 0, 0
	for i := range 150 {
		b := append([]byte(nil), good...)
		n := 1 + rng.Intn(8)
		for range n {
			var at int
			switch rng.Intn(3) {
			case 0: // the ELF header and program headers
				at = rng.Intn(256)
			default: // anywhere, weighted to the end where DWARF lives
				at = len(b) - 1 - rng.Intn(len(b)/2)
			}
			b[at] = byte(rng.Intn(256))
		}
		p := filepath.Join(dir, "c.so")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("case %d panicked: %v\n%s", i, r, debug.Stack())
				}
			}()
			_, err := Check(context.Background(), []string{p}, Options{Spec: f.sp, DebugDirs: []string{dir}})
			switch err.(type) {
			case nil:
				reports++
			case *elfread.InputError:
				inputErrs++
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("case %d: multi-line error %q", i, err)
				}
			default:
				t.Fatalf("case %d: error of type %T: %v", i, err, err)
			}
		}()
	}
	t.Logf("150 corrupted copies: %d reports, %d input errors, no panic", reports, inputErrs)
}
