package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffHTML: --format html writes DIR/index.html and says so with the
// verdict; the exit status is the diff's; --format html without -o, and -o
// with another format, are usage errors naming the flag; a DIR whose
// index.html is a directory is exit 1 naming it, and nothing is left
// beside it (docs/nrtabi-diff.md#html-report). The browser checks of the
// page are internal/render/html's. Cost: three diffs in process, < 1 s.
func TestDiffHTML(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	rc, out, errw := runCLI("diff", "--format", "html", "-o", dir, "2.31.24", "2.32.0-synthetic")
	if rc != 8 || !strings.Contains(out, "wrote "+filepath.Join(dir, "index.html")) || !strings.Contains(out, "verdict: INCOMPATIBLE") {
		t.Fatalf("exit %d\n%s\n%s", rc, out, errw)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil || !strings.Contains(string(page), "enc_nccl_comm_node.comm_gen") || !strings.Contains(string(page), `id="layout-2"`) {
		t.Errorf("page: %v\n%.400s", err, page)
	}
	if rc, _, errw := runCLI("diff", "--format", "html", "2.31.24", "2.32.0-synthetic"); rc != 2 || !strings.Contains(errw, "--format html writes a page: give -o DIR") {
		t.Errorf("html without -o: exit %d %s", rc, errw)
	}
	if rc, _, errw := runCLI("diff", "-o", dir, "2.31.24", "2.32.0-synthetic"); rc != 2 || !strings.Contains(errw, "-o is for --format html") {
		t.Errorf("-o with text: exit %d %s", rc, errw)
	}
	blocked := t.TempDir()
	if err := os.Mkdir(filepath.Join(blocked, "index.html"), 0o755); err != nil {
		t.Fatal(err)
	}
	rc, _, errw = runCLI("diff", "--format", "html", "-o", blocked, "2.31.24", "2.32.0-synthetic")
	if rc != 1 || !strings.Contains(errw, "index.html is not a regular file") {
		t.Errorf("index.html a directory: exit %d %s", rc, errw)
	}
	if ents, _ := os.ReadDir(blocked); len(ents) != 1 {
		t.Errorf("left beside it: %v", ents)
	}
}
