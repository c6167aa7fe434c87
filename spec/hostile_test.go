package spec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/internal/hostile"
)

// TestHostileSpecs: each crafted spec file gives exactly one error, at a
// file:line:col, naming what is wrong, in memory bounded by the input.
func TestHostileSpecs(t *testing.T) {
	for _, c := range hostile.SpecCases() {
		t.Run(c.Name, func(t *testing.T) {
			dir := copyRelease(t, Default)
			if err := c.Apply(dir); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := LoadDir(dir)
			runtime.ReadMemStats(&after)
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("want spec errors, got %T %v", err, err)
			}
			if len(errs) != 1 || !strings.Contains(errs[0].Msg, c.Want) {
				t.Fatalf("want one error saying %q, got %d: %.600v", c.Want, len(errs), err)
			}
			if errs[0].Pos.Line == 0 || errs[0].Pos.Col == 0 {
				t.Fatalf("error without line:col: %v", errs[0])
			}
			// The loader may use a few hundred times the input (TOML
			// decoding, the position index), never more.
			size := int64(len(c.Text)) + 200<<10
			if got := int64(after.TotalAlloc - before.TotalAlloc); got > 400*size {
				t.Fatalf("loading allocated %d MB for %d KB of input", got>>20, size>>10)
			}
		})
	}
}

// TestSpecFilesMustBeRegular: a FIFO or a link to a device among the
// *.toml files is refused before it is opened (opening a FIFO blocks).
func TestSpecFilesMustBeRegular(t *testing.T) {
	dir := copyRelease(t, Default)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.toml"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadDir(dir)
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a FIFO: %v", err)
	}
	dir = copyRelease(t, Default)
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.toml")); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a link to /dev/zero: %v", err)
	}
	dir = copyRelease(t, Default)
	big := make([]byte, MaxSpecFileSize+1)
	for i := range big {
		big[i] = '\n'
	}
	if err := os.WriteFile(filepath.Join(dir, "big.toml"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Fatalf("an oversized file: %v", err)
	}
}

// TestTypeLimits: the type parser refuses deep or long expressions with a
// message naming the limit, and sizes saturate instead of wrapping.
func TestTypeLimits(t *testing.T) {
	for _, bad := range []string{
		"u8" + strings.Repeat("[1]", MaxTypeDepth+1),
		"u8" + strings.Repeat("*", MaxTypeDepth+1),
		strings.Repeat("std::vector<", MaxTypeDepth+1) + "u8" + strings.Repeat(">", MaxTypeDepth+1),
		"u8" + strings.Repeat("*", MaxTypeLen),
		"std::vector<u8",
		"std::vector<u8>>",
		"u32>",
	} {
		if _, err := ParseType(bad); err == nil {
			t.Errorf("ParseType(%.40q...) accepted it", bad)
		}
	}
	ty, err := ParseType("u8[1073741824][1073741824][16]")
	if err != nil {
		t.Fatal(err)
	}
	if ty.Size() <= MaxObjectSize {
		t.Fatalf("size %d: a product past 2^31 must saturate above MaxObjectSize, not wrap", ty.Size())
	}
	if _, err := ParseType("std::vector<std::vector<u32*> >*[2]"); err != nil {
		t.Fatalf("a legitimate nested type: %v", err)
	}
}

// TestInjectionSpecs: spec text the generator once emitted as live C, linker
// script or Go (a "*/" in a struct's source, an enum tag "x; int y", a
// version node "A { global: z; }", a struct name with a space, NUL or ESC)
// is refused by the validator with one error at its file:line:col.
func TestInjectionSpecs(t *testing.T) {
	for _, c := range hostile.InjectionCases() {
		t.Run(c.Name, func(t *testing.T) {
			dir := copyRelease(t, Default)
			if err := c.Apply(dir); err != nil {
				t.Fatal(err)
			}
			_, err := LoadDir(dir)
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("want spec errors, got %T %v", err, err)
			}
			if len(errs) != 1 || !strings.Contains(errs[0].Msg, c.Want) {
				t.Fatalf("want one error saying %q, got %d: %.600v", c.Want, len(errs), err)
			}
			if errs[0].Pos.Line == 0 || errs[0].Pos.Col == 0 || !strings.HasSuffix(errs[0].Pos.File, "hostile.toml") {
				t.Fatalf("error not at hostile.toml:line:col: %v", errs[0])
			}
			if strings.ContainsAny(errs[0].Error(), "\x00\x1b\n") {
				t.Fatalf("the error line carries control bytes: %q", errs[0].Error())
			}
		})
	}
}

// TestSpecDirectoryBound: twenty files at the per-file cap (once 2.9 GB and
// 23 s) are refused by the directory's total bound, quickly and without
// reading them; so are too many files and too many entries.
func TestSpecDirectoryBound(t *testing.T) {
	dir := copyRelease(t, Default)
	for i := 0; i < 20; i++ {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("big%02d.toml", i)))
		if err != nil {
			t.Fatal(err)
		}
		// Sparse: 4 MiB of comment lines would be read; the size alone must refuse.
		if err := f.Truncate(MaxSpecFileSize); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := LoadDir(dir)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "MaxSpecDirSize") || !strings.Contains(err.Error(), dir) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("want one line naming MaxSpecDirSize and %s, got %v", dir, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refusing took %v", d)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 3*MaxSpecDirSize {
		t.Errorf("refusing allocated %d MB", got>>20)
	}

	dir = copyRelease(t, Default)
	for i := 0; i < MaxSpecDirFiles; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("z%03d.toml", i)), []byte("# empty\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), "MaxSpecDirFiles") {
		t.Fatalf("want the file-count bound, got %.300v", err)
	}

	dir = copyRelease(t, Default)
	for i := 0; i <= MaxSpecDirEntries; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("x%05d.txt", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), "MaxSpecDirEntries") {
		t.Fatalf("want the entry bound, got %.300v", err)
	}
}

// TestErrorLineEscaped: whatever a message quotes from the spec or a path
// (ESC, BEL, NUL, a line break, bytes that are not UTF-8, a bidi override)
// reaches the terminal escaped, on one line.
func TestErrorLineEscaped(t *testing.T) {
	e := &Error{Pos: Pos{File: "d\x1b]0;x\x07/a.toml", Line: 1, Col: 1}, Rule: "name", Msg: "struct h\x1b[2J_t\x00 \xff\n\u202e"}
	got := e.Error()
	for _, bad := range []string{"\x1b", "\x07", "\x00", "\xff", "\n", "\u202e"} {
		if strings.Contains(got, bad) {
			t.Errorf("%q reaches the error line: %q", bad, got)
		}
	}
	if !strings.Contains(got, `h\x1b[2J_t\x00 \xff\n\u202e`) {
		t.Errorf("escaped differently: %q", got)
	}
}
