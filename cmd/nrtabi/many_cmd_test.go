package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/spec"
)

// manyCorpus is a release-like tree of real shared objects built by gcc -g
// from the generated header, with what a walk must not read beside them
// (docs/nrtabi-check.md#many-inputs):
//
//	tree/00-big.so          every spec struct and 4000 more: the slowest input, first in order
//	tree/clean.so           clean
//	tree/renamed.so         a field renamed (compatible)
//	tree/sub/deep/shrunk.so a struct shrunk (incompatible)
//	tree/sub/libtypes.so.1  clean, reached first through the link tree/clean-link.so: read once, listed as that file
//	tree/notes.txt          not an ELF file
//	tree/sub/fifo           not a regular file (cannot be read)
//	tree/out.so             a symbolic link out of the tree
//	tree/loop1, loop2       a symbolic link loop
//	tree/sub/up             a symbolic link to a directory of the tree
type manyCorpus struct{ dir, outside string }

var (
	corpusOnce sync.Once
	corpus     manyCorpus
	corpusErr  error
)

func loadManyCorpus(tb testing.TB) manyCorpus {
	tb.Helper()
	if err := cc.Available(); err != nil {
		tb.Skipf("skipping: %v", err)
	}
	corpusOnce.Do(func() { corpus, corpusErr = buildManyCorpus() })
	if corpusErr != nil {
		tb.Fatal(corpusErr)
	}
	return corpus
}

func buildManyCorpus() (manyCorpus, error) {
	base, err := os.MkdirTemp("", "nrtabi-many-")
	if err != nil {
		return manyCorpus{}, err
	}
	c := manyCorpus{dir: filepath.Join(base, "tree"), outside: filepath.Join(base, "outside.so")}
	h, err := os.ReadFile(filepath.Join("../../generated", spec.Default, "c", gen.HeaderName))
	if err != nil {
		return c, err
	}
	var big strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&big, "struct filler%d { long a%d; int b; char c[%d]; struct filler%d *next; } filler%d;\n", i, i, i%13+1, i, i)
	}
	build := func(out, old, repl, extra string) error {
		text := string(h)
		if old != "" {
			var kept []string
			for _, l := range strings.Split(text, "\n") {
				if !strings.HasPrefix(l, "_Static_assert(") {
					kept = append(kept, l)
				}
			}
			if text = strings.Replace(strings.Join(kept, "\n"), old, repl, 1); !strings.Contains(text, repl) {
				return fmt.Errorf("%s: the header has no %q to replace", out, old)
			}
		}
		src, err := os.MkdirTemp(base, "src-")
		if err != nil {
			return err
		}
		files := map[string]string{gen.HeaderName: text, "types.c": "#define _GNU_SOURCE\n#include \"" + gen.HeaderName + "\"\n" + extra}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
				return err
			}
		}
		if err := cc.Shared(src, "lib.so", "libtypes.so", "", []string{"types.c"}, "-fno-eliminate-unused-debug-types"); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.Rename(filepath.Join(src, "lib.so"), out)
	}
	for _, b := range []struct{ out, old, repl, extra string }{
		{"00-big.so", "", "", big.String()},
		{"clean.so", "", "", ""},
		{"renamed.so", "\tint refcnt; /* +28 HIGH */\n", "\tint refs;\n", ""},
		{"sub/deep/shrunk.so", "\tchar device_revision[8]; /* +24 HIGH */\n", "\tchar device_revision[4];\n", ""},
		{"sub/libtypes.so.1", "", "", ""},
	} {
		if err := build(filepath.Join(c.dir, b.out), b.old, b.repl, b.extra); err != nil {
			return c, err
		}
	}
	if err := os.WriteFile(c.outside, []byte("\x7fELF outside the tree"), 0o644); err != nil {
		return c, err
	}
	steps := []error{
		os.WriteFile(filepath.Join(c.dir, "notes.txt"), []byte("release notes\n"), 0o644),
		syscall.Mkfifo(filepath.Join(c.dir, "sub", "fifo"), 0o644),
		os.Symlink(c.outside, filepath.Join(c.dir, "out.so")),
		os.Symlink("loop2", filepath.Join(c.dir, "loop1")),
		os.Symlink("loop1", filepath.Join(c.dir, "loop2")),
		os.Symlink("..", filepath.Join(c.dir, "sub", "up")),
		os.Symlink("sub/libtypes.so.1", filepath.Join(c.dir, "clean-link.so")),
	}
	for _, err := range steps {
		if err != nil {
			return c, err
		}
	}
	return c, nil
}

// TestManyInputsDeterministic (docs/nrtabi-check.md#many-inputs): -j 1 and -j 8 give
// byte-identical text, JSON and JUnit over a multi-file corpus, with the
// same exit status. The first input is the slowest, so at -j 8 the others
// finish before it: a merge in completion order fails here (checked by
// planting one in layoutcheck.checkAll).
func TestManyInputsDeterministic(t *testing.T) {
	c := loadManyCorpus(t)
	for _, format := range []string{"text", "json", "junit"} {
		rc1, out1, err1 := runLayoutCLI("check", "-j", "1", "--format", format, c.dir)
		if rc1 != 12 {
			t.Fatalf("%s -j 1: exit %d, want 12 (a rename and a shrink)\n%s%s", format, rc1, out1, err1)
		}
		for run := range 3 {
			rc8, out8, err8 := runLayoutCLI("check", "-j", "8", "--format", format, c.dir)
			if rc8 != rc1 || out8 != out1 || err8 != err1 {
				t.Fatalf("%s: -j 8 (run %d) differs from -j 1: exit %d vs %d\n%s", format, run, rc8, rc1, firstDiff(out1, out8))
			}
		}
	}
	// The show of one struct over the tree, likewise.
	rc1, out1, _ := runLayoutCLI("show", "-j", "1", "nrt_instance_info_t", c.dir)
	rc8, out8, _ := runLayoutCLI("show", "-j", "8", "nrt_instance_info_t", c.dir)
	if rc1 != 8 || rc8 != rc1 || out8 != out1 {
		t.Fatalf("show: -j 1 exit %d, -j 8 exit %d (want 8 both)\n%s", rc1, rc8, firstDiff(out1, out8))
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n  -j 1: %s\n  -j 8: %s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d lines vs %d", len(al), len(bl))
}

// TestManyInputsReport: one report grouped by file in input order
// (directory entries sorted), what was not read named with its reason, the
// exit status the bits of all files, --fail-on applied to the whole.
func TestManyInputsReport(t *testing.T) {
	c := loadManyCorpus(t)
	rc, out, errs := runLayoutCLI("check", "--format", "json", c.dir)
	if rc != 12 {
		t.Fatalf("exit %d\n%s", rc, errs)
	}
	var rep struct {
		Files []struct {
			Path string
		}
		Skipped []struct{ Path, Reason string }
		Exit    int
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	var files, skipped []string
	for _, f := range rep.Files {
		files = append(files, strings.TrimPrefix(f.Path, c.dir+"/"))
	}
	for _, s := range rep.Skipped {
		skipped = append(skipped, strings.TrimPrefix(s.Path, c.dir+"/")+": "+strings.ReplaceAll(s.Reason, c.dir, "TREE"))
	}
	wantFiles := "00-big.so clean-link.so clean.so renamed.so sub/deep/shrunk.so"
	if strings.Join(files, " ") != wantFiles {
		t.Errorf("files in the report: %s\nwant %s", strings.Join(files, " "), wantFiles)
	}
	wantSkipped := []string{
		"loop1: symbolic link loop, not followed",
		"loop2: symbolic link loop, not followed",
		`notes.txt: not an ELF file (starts with "rele")`,
		"out.so: symbolic link out of TREE, not followed",
		"sub/fifo: is a FIFO, not a regular file",
		"sub/libtypes.so.1: the same file as TREE/clean-link.so (one device and inode), read once",
		"sub/up: symbolic link to a directory of the tree, not followed",
	}
	if strings.Join(skipped, "\n") != strings.Join(wantSkipped, "\n") {
		t.Errorf("not read:\n%s\nwant:\n%s", strings.Join(skipped, "\n"), strings.Join(wantSkipped, "\n"))
	}
	_, text, _ := runLayoutCLI("check", c.dir)
	if !strings.Contains(text, "\nnot read (7)\n    "+filepath.Join(c.dir, "loop1")+": symbolic link loop") ||
		strings.Index(text, "== "+filepath.Join(c.dir, "00-big.so")) > strings.Index(text, "== "+filepath.Join(c.dir, "clean.so")) {
		t.Errorf("text report:\n%s", text)
	}
	_, junit, _ := runLayoutCLI("check", "--format", "junit", c.dir)
	if strings.Count(junit, "<testsuite ") != 5+1 || !strings.Contains(junit, `<testcase name="`+filepath.Join(c.dir, "notes.txt")+`" classname="input">`) {
		t.Errorf("JUnit: want a suite per file and one of entries not read (every spec struct is found):\n%s", junit)
	}
	// --fail-on applies to the whole: the shrink in one file keeps the
	// status; with none it is 0.
	if rc, _, _ := runLayoutCLI("check", "--fail-on", "incompatible", c.dir); rc != 12 {
		t.Errorf("--fail-on incompatible over the tree: exit %d, want 12", rc)
	}
	if rc, _, _ := runLayoutCLI("check", "--fail-on", "incompatible", filepath.Join(c.dir, "clean.so"), filepath.Join(c.dir, "renamed.so")); rc != 0 {
		t.Errorf("--fail-on incompatible over a clean and a renamed file: exit %d, want 0", rc)
	}
	// A file named on the command line is read whatever it is.
	if rc, _, errs := runLayoutCLI("check", filepath.Join(c.dir, "clean.so"), filepath.Join(c.dir, "notes.txt")); rc != 1 || !strings.Contains(errs, "notes.txt: not an ELF file") {
		t.Errorf("a named non-ELF file: exit %d %q", rc, errs)
	}
}

// TestManyInputsFail: --non-elf fail refuses the run naming the first
// entry in walk order; a link not followed is no failure by itself.
func TestManyInputsFail(t *testing.T) {
	c := loadManyCorpus(t)
	rc, out, errs := runLayoutCLI("check", "--non-elf", "fail", "--format", "json", c.dir)
	if rc != 1 || !strings.Contains(errs, filepath.Join(c.dir, "loop1")+": symbolic link loop, not followed; remove it, or pass --non-elf skip") {
		t.Fatalf("--non-elf fail: exit %d %q", rc, errs)
	}
	var doc struct {
		Error struct{ Input string }
		Exit  int
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Exit != 1 || doc.Error.Input != filepath.Join(c.dir, "loop1") {
		t.Fatalf("error document: %v %s", err, out)
	}
	dir := t.TempDir()
	for _, n := range []string{"a.so", "b.so"} {
		if err := os.Symlink(c.outside, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(c.dir, "clean.so"), filepath.Join(dir, "c.so")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(c.dir, "clean.so"))
	if err := os.WriteFile(filepath.Join(dir, "real", "clean.so"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	rc, out, errs = runLayoutCLI("check", "--non-elf", "fail", dir)
	if rc != 0 || !strings.Contains(out, "a.so: symbolic link out of") {
		t.Fatalf("links out of the tree under --non-elf fail: exit %d\n%s%s", rc, out, errs)
	}
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "README"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rc, _, errs := runLayoutCLI("check", empty); rc != 1 || !strings.Contains(errs, "no ELF file to check (1 entries not read") {
		t.Errorf("a tree with no ELF file: exit %d %q", rc, errs)
	}
	for _, j := range []string{"0", "-3"} {
		if rc, _, errs := runLayoutCLI("check", "-j", j, c.dir); rc != 2 || !strings.Contains(errs, "-j "+j+": give the number of inputs") {
			t.Errorf("-j %s: exit %d %q", j, rc, errs)
		}
	}
	if rc, _, errs := runLayoutCLI("check", "--non-elf", "ignore", c.dir); rc != 2 || !strings.Contains(errs, `--non-elf "ignore": use skip or fail`) {
		t.Errorf("--non-elf ignore: exit %d %q", rc, errs)
	}
	if rc, _, errs := runLayoutCLI("show", "--c", "nrt_instance_info_t", c.dir); rc != 2 || !strings.Contains(errs, "--c prints one struct of one FILE") {
		t.Errorf("show --c over a tree: exit %d %q", rc, errs)
	}
	if rc, out, errs := runLayoutCLI("show", "no_such_struct_anywhere", c.dir); rc != 1 || !strings.Contains(errs, "no struct no_such_struct_anywhere in any of the 5 inputs") || !strings.Contains(out, "found in 0 of 5 inputs read") {
		t.Errorf("show of a struct in no input: exit %d %q\n%s", rc, errs, out)
	}
}

// BenchmarkCheckMany is the parallel check over the corpus plus 8 objects
// of 20000 structs each and none of the spec's (1.7 MiB of .debug_info
// each: the whole of it is scanned to find them absent), at -j 1 and -j 2
// (docs/nrtabi-check.md#many-inputs); compare the two ns/op.
func BenchmarkCheckMany(b *testing.B) {
	c := loadManyCorpus(b)
	dir := b.TempDir()
	var src strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&src, "struct bulk%d { long a%d; int b; char c[%d]; struct bulk%d *next; } bulk%d;\n", i, i, i%13+1, i, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "bulk.c"), []byte(src.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := cc.Shared(dir, "bulk.so", "libbulk.so", "", []string{"bulk.c"}); err != nil {
		b.Fatal(err)
	}
	bulk, err := os.ReadFile(filepath.Join(dir, "bulk.so"))
	if err != nil {
		b.Fatal(err)
	}
	tree := filepath.Join(dir, "tree")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range 8 {
		if err := os.WriteFile(filepath.Join(tree, fmt.Sprintf("libbulk%d.so", i)), bulk, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, j := range []string{"1", "2"} {
		b.Run("j"+j, func(b *testing.B) {
			for b.Loop() {
				var errw bytes.Buffer
				if rc := run([]string{"check", "-j", j, "--format", "json", c.dir, tree}, io.Discard, &errw); rc != 12 {
					b.Fatalf("exit %d: %s", rc, errw.String())
				}
			}
		})
	}
}
