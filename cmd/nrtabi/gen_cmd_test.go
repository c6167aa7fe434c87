package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/spectest"
	"github.com/nrtabi/nrtabi/spec"
)

// TestGenRefusalOneLinePerUse: a tree whose hand-written code names two
// fields a release lacks directly is refused by `gen --all`, each use site
// on a line of its own (never the reasons joined by a literal \n), then one
// line saying why, exit 1.
func TestGenRefusalOneLinePerUse(t *testing.T) {
	root := t.TempDir()
	src := "package x\n\nimport \"github.com/nrtabi/nrtabi/generated/abi\"\n\n" +
		"func f(i *abi.NRTInstanceInfo) { i.ArchName[0] = 1 }\n\n" +
		"func g(i *abi.NRTInstanceInfo) byte { return i.DeviceRevision[0] }\n"
	if err := os.MkdirAll(filepath.Join(root, "runtime", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "runtime", "x", "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	rc, _, errw := runCLI("gen", "--all", "--root", root, "--check")
	lines := strings.Split(strings.TrimSuffix(errw, "\n"), "\n")
	if rc != 1 || len(lines) != 3 || strings.Contains(errw, `\n`) {
		t.Fatalf("exit %d, %d lines:\n%s\nwant exit 1, two use sites and a closing line", rc, len(lines), errw)
	}
	for i, want := range []string{"runtime/x/x.go:5: names ArchName directly, but nrt_instance_info_t.arch_name is absent in 2.20.0-synthetic",
		"runtime/x/x.go:7: names DeviceRevision directly, but nrt_instance_info_t.device_revision is absent in 2.20.0-synthetic"} {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d: %s\nwant it to start %q", i+1, lines[i], want)
		}
	}
	if !strings.HasPrefix(lines[2], "nrtabi gen: 2 reason(s) above refuse generation") {
		t.Errorf("closing line: %s", lines[2])
	}
}

// TestGenBadSpecOneLine: a spec with one bad field (written twice: a
// duplicate and a clash of Go fields) makes `gen` print that one line.
func TestGenBadSpecOneLine(t *testing.T) {
	dir := spectest.CopyRelease(t, spec.Embedded, spec.Default)
	p := filepath.Join(dir, "structs_nrt.toml")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(data), `name = "device_revision"`, `name = "arch_name"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	rc, _, errw := runCLI("gen", "--spec", dir, "--out", t.TempDir())
	if rc != 1 || strings.Count(errw, "\n") != 1 || !strings.Contains(errw, "structs_nrt.toml:146:3: [unique] nrt_instance_info_t.arch_name is declared twice") {
		t.Errorf("exit %d:\n%s\nwant exit 1 and the one line", rc, errw)
	}
}
