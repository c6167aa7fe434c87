package layers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/nrtabi/nrtabi/docs"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The house keeps no build output and no citation a reader cannot open.
// Both checks read the files git tracks, so what a build leaves in the
// working tree (ignored) is not the house's.

// compiledMagic are the first bytes of the compiled artefacts a checkout
// must not carry: the tests and the benches build what they need.
var compiledMagic = []struct{ magic, what string }{
	{"\x7fELF", "an ELF file (object, shared library or executable)"},
	{"!<arch>\n", "an ar archive (a static library)"},
	{"!<thin>\n", "a thin ar archive"},
}

// compiledArtefacts reports, one line each, the files of list (paths
// relative to root, slash-separated, as git prints them) that open as a
// compiled artefact. Symbolic links are not followed: git keeps a link's
// text, not what it names. A listed file that cannot be read is an error,
// so a check that read nothing cannot pass.
func compiledArtefacts(root string, list []string) ([]string, error) {
	var out []string
	for _, name := range list {
		p := filepath.Join(root, filepath.FromSlash(name))
		fi, err := os.Lstat(p)
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		head, err := readHead(p, 8)
		if err != nil {
			return nil, err
		}
		for _, m := range compiledMagic {
			if bytes.HasPrefix(head, []byte(m.magic)) {
				out = append(out, fmt.Sprintf("%s: %s is tracked: remove it (git rm --cached) and build it where it is needed; ignore it in .gitignore", name, m.what))
				break
			}
		}
	}
	return out, nil
}

// readHead is at most n bytes from the start of the file at p.
func readHead(p string, n int) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	k, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:k], nil
}

// issueCitation is a citation of a tracker's issue by number: the word
// issue or issues, then a number, with blanks, a hyphen, an underscore or
// a "#" between. No reader of the code can open it. A comment cites what a
// maintainer can open (a spec row id, a docs/ anchor, a seed section of
// docs/sources.md) or says the why.
var issueCitation = regexp.MustCompile(`(?i)\bissues?[ \t_-]*#?[0-9]+`)

// citationScanned reports whether a tracked file is code whose text is
// held to issueCitation: Go, C and headers, templates and the generator's
// goldens, linker scripts, Makefiles, shell and other #! scripts, TOML and
// Promela. docs/ is the manual, which may tell the history; its Go files
// are code.
func citationScanned(name string, head []byte) bool {
	if strings.HasPrefix(name, "docs/") && !strings.HasSuffix(name, ".go") {
		return false
	}
	base := path.Base(name)
	switch path.Ext(base) {
	case ".go", ".c", ".h", ".cc", ".cpp", ".hpp", ".tmpl", ".golden", ".map", ".sh", ".toml", ".pml", ".mk":
		return true
	}
	return base == "Makefile" || bytes.HasPrefix(head, []byte("#!"))
}

// maxScanned bounds what one file may hold for the citation scan: the
// largest tracked source (the compiled spec) is a few MiB.
const maxScanned = 64 << 20

// eachScanned calls fn with the bytes of every file of list (relative to
// root, as git prints them) that the citation scans read: regular files of
// the kinds citationScanned names, each at most maxScanned bytes. It
// returns how many it read.
func eachScanned(root string, list []string, fn func(name string, data []byte) error) (int, error) {
	scanned := 0
	for _, name := range list {
		p := filepath.Join(root, filepath.FromSlash(name))
		fi, err := os.Lstat(p)
		if err != nil {
			return 0, err
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		head, err := readHead(p, 2)
		if err != nil {
			return 0, err
		}
		if !citationScanned(name, head) {
			continue
		}
		if fi.Size() > maxScanned {
			return 0, fmt.Errorf("%s: %d bytes, more than the %d the citation scan reads", name, fi.Size(), maxScanned)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return 0, err
		}
		scanned++
		if err := fn(name, data); err != nil {
			return 0, err
		}
	}
	return scanned, nil
}

// issueCitations reports, as file:line: text, every issue citation in the
// scanned files of list, and how many files it read.
func issueCitations(root string, list []string) ([]string, int, error) {
	var out []string
	scanned, err := eachScanned(root, list, func(name string, data []byte) error {
		for i, line := range bytes.Split(data, []byte("\n")) {
			if m := issueCitation.Find(line); m != nil {
				out = append(out, fmt.Sprintf("%s:%d: %q cites an issue number no reader can open: cite a spec row id, a docs/ anchor or a seed section (docs/sources.md), or say the why",
					name, i+1, m))
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return out, scanned, nil
}

// trackedFiles is what git tracks in the module's checkout.
func trackedFiles(t *testing.T) (string, []string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skipf("git is not on PATH, so there is no list of tracked files to read: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	root := moduleRoot(ctx, t)
	cmd := exec.CommandContext(ctx, "git", "-C", root, "ls-files", "-z", "--cached")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files in %s: %v\n%s", root, err, stderr.Bytes())
	}
	var list []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			list = append(list, f)
		}
	}
	if len(list) == 0 {
		t.Fatalf("git ls-files in %s lists no file: nothing to check", root)
	}
	// A file deleted in the working tree but still tracked is not there to
	// read; git status shows it.
	var present []string
	for _, f := range list {
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f))); errors.Is(err, fs.ErrNotExist) {
			t.Logf("%s is tracked but not in the working tree: not read", f)
			continue
		}
		present = append(present, f)
	}
	return root, present
}

// TestNoTrackedCompiledArtefacts: no file git tracks is an ELF file or an
// ar archive.
func TestNoTrackedCompiledArtefacts(t *testing.T) {
	n := reportTracked(t, compiledArtefacts)
	t.Logf("%d tracked files read", n)
}

// reportTracked fails t with each line check reports of the files git
// tracks, and says how many it read.
func reportTracked(t *testing.T, check func(root string, list []string) ([]string, error)) int {
	t.Helper()
	root, list := trackedFiles(t)
	bad, err := check(root, list)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
	return len(list)
}

// emptyFiles reports, one line each, the regular files of list (as
// compiledArtefacts reads it) that hold nothing: a stray output of a
// command whose redirect named the wrong place, which a reader can only
// wonder about.
func emptyFiles(root string, list []string) ([]string, error) {
	var out []string
	for _, name := range list {
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			return nil, err
		}
		if fi.Mode().IsRegular() && fi.Size() == 0 {
			out = append(out, fmt.Sprintf("%s: an empty file is tracked: remove it (git rm), or give it what it is for", name))
		}
	}
	return out, nil
}

// TestNoTrackedEmptyFiles: every file git tracks holds something.
func TestNoTrackedEmptyFiles(t *testing.T) {
	reportTracked(t, emptyFiles)
}

// TestEmptyFilesCaught: a planted empty file is named; a file of one
// byte and a symbolic link to the empty file are not.
func TestEmptyFilesCaught(t *testing.T) {
	root, list := plant(t, map[string]string{"n4.toml": "", "one": "\n", "spec/x.toml": "a = 1\n"})
	if err := os.Symlink("n4.toml", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	got, err := emptyFiles(root, append(list, "link"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "n4.toml: an empty file is tracked") {
		t.Fatalf("want one report naming n4.toml, got %q", got)
	}
	if _, err := emptyFiles(root, []string{"gone"}); err == nil {
		t.Error("a listed file that is not there: no error")
	}
}

// TestNoIssueCitations: no tracked code cites an issue number.
func TestNoIssueCitations(t *testing.T) {
	root, list := trackedFiles(t)
	bad, scanned, err := issueCitations(root, list)
	if err != nil {
		t.Fatal(err)
	}
	if scanned == 0 {
		t.Fatalf("none of the %d tracked files is code the scan reads: nothing was checked", len(list))
	}
	for _, b := range bad {
		t.Error(b)
	}
	t.Logf("%d tracked code files scanned", scanned)
}

// plant writes files (name -> content) under a new directory and returns
// it with their names.
func plant(t *testing.T, files map[string]string) (string, []string) {
	t.Helper()
	root := t.TempDir()
	var list []string
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		list = append(list, name)
	}
	return root, list
}

// TestCompiledArtefactsCaught: a planted ELF object, an ar archive and a
// thin archive are each named; text, a file shorter than any magic, an
// empty file and a symbolic link to the object are not.
func TestCompiledArtefactsCaught(t *testing.T) {
	root, list := plant(t, map[string]string{
		"bench/bootscale/bootscale": "\x7fELF\x02\x01\x01\x00rest of an executable",
		"lib/libx.a":                "!<arch>\n/               0           0     0     0       4         `\n",
		"lib/thin.a":                "!<thin>\n",
		"main.go":                   "package main\n",
		"short":                     "\x7fEL",
		"empty":                     "",
		"testdata/elf.txt":          "an ELF file starts with \x7fELF, but this one is text",
	})
	if err := os.Symlink("bench/bootscale/bootscale", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	list = append(list, "link")
	got, err := compiledArtefacts(root, list)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"bench/bootscale/bootscale": "an ELF file", "lib/libx.a": "an ar archive", "lib/thin.a": "a thin ar archive"}
	if len(got) != len(want) {
		t.Fatalf("want %d reports, got %d:\n%s", len(want), len(got), strings.Join(got, "\n"))
	}
	for _, g := range got {
		name, rest, _ := strings.Cut(g, ": ")
		if w, ok := want[name]; !ok || !strings.HasPrefix(rest, w) {
			t.Errorf("unexpected report %q", g)
		}
	}
	if _, err := compiledArtefacts(root, []string{"gone"}); err == nil {
		t.Error("a listed file that is not there: no error")
	}
}

// TestIssueCitationsCaught: every spelling of an issue citation is named
// with its file and line, in every kind of code the scan reads; the
// manual under docs/, a text fixture, and words that only look alike
// ("tissue 3", "issued 4") are not.
func TestIssueCitationsCaught(t *testing.T) {
	// Spelled apart so that this file holds no citation itself.
	iss := "iss" + "ue"
	root, list := plant(t, map[string]string{
		"a/a.go":             "package a\n\n// fine\n// as " + iss + " 22 says\n",
		"a/b.c":              "/* " + iss + "s 23 and 22 */\n",
		"a/c.h":              "int x; /* " + strings.ToUpper(iss[:1]) + iss[1:] + " #5 */\n",
		"gen/t.tmpl":         "{{/* the " + iss + "-25 test */}}\n",
		"Makefile":           "all:\n\n# " + iss + "_7\n",
		"run.sh":             "#!/bin/sh\n# see " + iss + " 11\n",
		".ci/run":            "#!/bin/sh\n\n\n# " + iss + "  9\n",
		"spec/x.toml":        "source = \"" + iss + " 27\"\n",
		"model/m.pml":        "/* " + iss + " 6 */\n",
		"docs/page.md":       "What changed in " + iss + " 23.\n",
		"docs/doc_test.go":   "package docs // " + iss + " 3\n",
		"testdata/notes.txt": iss + " 1\n",
		"b/ok.go":            "package b // a tissue 3, the " + iss + "d 4th, " + iss + "s with no number\n",
	})
	got, scanned, err := issueCitations(root, list)
	if err != nil {
		t.Fatal(err)
	}
	if scanned != 11 {
		t.Errorf("want 11 files scanned (all but docs/page.md and the .txt), got %d", scanned)
	}
	want := []string{"a/a.go:4: ", "a/b.c:1: ", "a/c.h:1: ", "gen/t.tmpl:1: ", "Makefile:3: ", "run.sh:2: ", ".ci/run:4: ", "spec/x.toml:1: ", "model/m.pml:1: ", "docs/doc_test.go:1: "}
	if len(got) != len(want) {
		t.Fatalf("want %d reports, got %d:\n%s", len(want), len(got), strings.Join(got, "\n"))
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || strings.HasPrefix(g, w)
		}
		if !found {
			t.Errorf("no report at %s; got:\n%s", w, strings.Join(got, "\n"))
		}
	}
}

// docCitation is a citation of a page of the manual with an anchor, as code
// writes it: the page's path under docs/, then '#' and the anchor.
var docCitation = regexp.MustCompile(`\bdocs/([A-Za-z0-9_.-]+\.md)#([A-Za-z0-9_-]+)`)

// brokenDocCitations reports, as file:line, every citation of a manual
// page's anchor (docCitation) in the scanned files of list (outside docs/, whose own links docs/'s test holds)
// whose page or anchor does not exist under root, and how many citations
// it read.
func brokenDocCitations(root string, list []string) ([]string, int, error) {
	pages := map[string]map[string]bool{}
	var out []string
	cited := 0
	_, err := eachScanned(root, list, func(name string, data []byte) error {
		if strings.HasPrefix(name, "docs/") {
			return nil
		}
		for i, line := range bytes.Split(data, []byte("\n")) {
			for _, m := range docCitation.FindAllSubmatch(line, -1) {
				cited++
				page, anchor := "docs/"+string(m[1]), string(m[2])
				a, ok := pages[page]
				if !ok {
					text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
					if err != nil && !errors.Is(err, fs.ErrNotExist) {
						return err
					}
					if err == nil {
						a = docs.Anchors(text)
					}
					pages[page] = a
				}
				switch {
				case a == nil:
					out = append(out, fmt.Sprintf("%s:%d: %s cites %s, which is no page of the manual", name, i+1, m[0], page))
				case !a[anchor]:
					out = append(out, fmt.Sprintf("%s:%d: %s: %s has no anchor #%s (a heading slug or <a id=...>): cite the heading as it is now", name, i+1, m[0], page, anchor))
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return out, cited, nil
}

// TestDocCitationsResolve: every citation of a manual page's anchor in code
// names a page and an anchor that exist, so a citation stays one a maintainer
// can open.
func TestDocCitationsResolve(t *testing.T) {
	root, list := trackedFiles(t)
	bad, cited, err := brokenDocCitations(root, list)
	if err != nil {
		t.Fatal(err)
	}
	if cited == 0 {
		t.Fatalf("no tracked code cites an anchor of the manual: nothing was checked")
	}
	for _, b := range bad {
		t.Error(b)
	}
	t.Logf("%d citations of the manual checked", cited)
}

// TestDocCitationsCaught: a citation of a missing anchor and one of a
// missing page are named; a heading slug, a repeated heading's -1, an
// explicit id and a citation inside docs/ are not, nor a heading inside a
// code fence (which is no anchor, so citing it is caught).
func TestDocCitationsCaught(t *testing.T) {
	// Spelled apart so that this file holds no citation itself.
	d := "do" + "cs/"
	root, list := plant(t, map[string]string{
		"docs/page.md": "# Title\n\n## The `x` option, again\n\n## Tests\n\n## Tests\n\n<a id=\"s001-3\"></a>\n\n```\n## Not a heading\n```\n",
		"a/a.go": "package a\n\n// " + d + "page.md#the-x-option-again " + d + "page.md#tests-1 " + d + "page.md#s001-3\n" +
			"// " + d + "page.md#gone\n// " + d + "none.md#x\n// " + d + "page.md#not-a-heading\n",
		"docs/doc_test.go": "package docs // " + d + "page.md#gone is docs/'s own test's to hold\n",
	})
	got, cited, err := brokenDocCitations(root, list)
	if err != nil {
		t.Fatal(err)
	}
	if cited != 6 {
		t.Errorf("want 6 citations read, got %d", cited)
	}
	want := []string{"a/a.go:4: " + d + "page.md#gone: " + d + "page.md has no anchor #gone", "a/a.go:5: " + d + "none.md#x cites " + d + "none.md, which is no page",
		"a/a.go:6: " + d + "page.md#not-a-heading: " + d + "page.md has no anchor"}
	if len(got) != len(want) {
		t.Fatalf("want %d reports, got %d:\n%s", len(want), len(got), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("report %d: want %q..., got %q", i, want[i], got[i])
		}
	}
}
