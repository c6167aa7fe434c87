package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// TestReleaseNewNames: a name whose build tag is an existing release's
// (2_31_24, 2-31-24 and 2.31.24 select the same files) is refused before
// anything is read, naming that release; a directory that is not a
// release (a Go package like spec/compiled, a testdata tree) is never
// replaced, --force or not, and is left as it was. Against the code
// before, --force replaced both and the tag collision passed.
func TestReleaseNewNames(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module github.com/nrtabi/nrtabi\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"spec/compiled", "spec/testdata/fuzz"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src := filepath.Join(root, "spec", "compiled", "compiled.go")
	if err := os.WriteFile(src, []byte("package compiled\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	for _, n := range []string{"2_31_24", "2-31-24"} {
		rc, _, errw := runCLI("release", "new", "--name", n, "--binary", "x.so")
		if rc != 2 || !strings.Contains(errw, "release 2.31.24's") || strings.Count(strings.TrimSpace(errw), "\n") > 1 {
			t.Errorf("--name %s: exit %d %q", n, rc, errw)
		}
	}
	for _, n := range []string{"compiled", "testdata"} {
		for _, force := range []bool{false, true} {
			args := []string{"release", "new", "--name", n, "--binary", "x.so"}
			if force {
				args = append(args, "--force")
			}
			rc, _, errw := runCLI(args...)
			if rc != 1 || !strings.Contains(errw, "is not a release directory") || !strings.Contains(errw, "choose another --name") {
				t.Errorf("--name %s (force %v): exit %d %q", n, force, rc, errw)
			}
		}
	}
	if data, err := os.ReadFile(src); err != nil || string(data) != "package compiled\n" {
		t.Errorf("spec/compiled was touched: %v %q", err, data)
	}
	if _, err := os.Stat(filepath.Join(root, "spec", "testdata", "fuzz")); err != nil {
		t.Errorf("spec/testdata was touched: %v", err)
	}
}

// TestCheckNothingChecked: a check of a file holding none of the spec's
// structs and playing no library role exits 1 with one line naming it,
// never CLEAN; --allow-empty accepts it. release new's diff names no exit
// status (it exits 0 when it wrote the release).
func TestCheckNothingChecked(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "none.c"), []byte("int nothing_here;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cc.Shared(dir, "libnone.so", "libnone.so", "", []string{"none.c"}); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, "libnone.so")
	rc, out, errw := runCLI("check", "--spec", "2.31.24", lib)
	if rc != 1 || out != "" || !strings.Contains(errw, "nothing checked: none of the") || !strings.Contains(errw, lib) || strings.Count(strings.TrimSpace(errw), "\n") != 0 {
		t.Errorf("check of a library without spec structs: exit %d\n%s%s", rc, out, errw)
	}
	if rc, out, errw := runCLI("check", "--allow-empty", "--spec", "2.31.24", lib); rc != 0 || !regexp.MustCompile(`; 0 of \d+ spec structs found, no layout checked`).MatchString(out) {
		t.Errorf("--allow-empty: exit %d\n%s%s", rc, out, errw)
	}
	tree, err := filepath.Abs(filepath.Join("..", "..", "release", "testdata", "olddrop", "include"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module github.com/nrtabi/nrtabi\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	rc, out, errw = runCLI("release", "new", "--name", "2.29.0-old", "--headers", tree)
	if rc != 0 || strings.Contains(out, "(exit ") || !strings.Contains(out, "verdict: INCOMPATIBLE") || !strings.Contains(out, "struct-described") {
		t.Errorf("release new --headers on the older drop: exit %d, want 0 and a verdict without an exit status\n%s%s", rc, out, errw)
	}
	if rc, out, errw := runCLI("check", "--spec", "2.29.0-old", "--headers", tree); rc != 0 || !strings.Contains(out, "verdict: CLEAN") {
		t.Errorf("check --spec 2.29.0-old --headers the same tree: exit %d\n%s%s", rc, out, errw)
	}
}

// TestDiffHeaderTrees: nrtabi diff DIR DIR of two header trees that both
// define a parent opaque type as a struct (the older drop and a copy in
// which net_src_addr grew from 48 to 64 bytes and net_ops_info lost a
// field) reports both pointee changes, and no clash of an opaque type and
// a struct of one name. Before, the opaque type stayed next to the struct
// and the diff could not run.
func TestDiffHeaderTrees(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	old := filepath.Join("..", "..", "release", "testdata", "olddrop", "include")
	dir := t.TempDir()
	for _, f := range []string{"nec.h", "nrt.h", "nrt_status.h", "nrt_types.h", "nrt_version.h", "nccom_net.h"} {
		data, err := os.ReadFile(filepath.Join(old, "nrt", f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "nccom_net.h" {
			text := strings.Replace(string(data), "\tnrt_addr_family_t family;\n} net_src_addr_t;", "\tnrt_addr_family_t family;\n\tuint64_t scope;\n\tuint64_t flow;\n} net_src_addr_t;", 1)
			data = []byte(strings.Replace(text, "\tint peer;\n", "", 1))
		}
		if err := os.MkdirAll(filepath.Join(dir, "nrt"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "nrt", f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rc, out, errw := runCLI("diff", old, dir)
	for _, want := range [][]string{{"struct-size", "net_src_addr_t", "48 -> 64"}, {"field-removed", "net_ops_info_t.peer"}} {
		found := false
		for _, l := range strings.Split(out, "\n") {
			all := true
			for _, w := range want {
				all = all && strings.Contains(l, w)
			}
			found = found || all
		}
		if !found {
			t.Errorf("diff DIR DIR: no line with %q (exit %d)\n%s%s", want, rc, out, errw)
		}
	}
	if rc != 8 || strings.Contains(out, "enc_alg_hier") {
		t.Errorf("diff DIR DIR: exit %d, want 8 and nothing of enc_alg_hier (unchanged, anonymous members)\n%s%s", rc, out, errw)
	}
}

// TestReleaseNewCompileOptions: release new takes the compile options
// check and show take (-I, --cflags) and records them in
// [release.headers]: the force-included file apart from the other flags,
// the -I directory; a --cflags word that is no compile flag is a usage
// error naming it; and check with the same options is CLEAN.
func TestReleaseNewCompileOptions(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	tree, vendor := t.TempDir(), t.TempDir()
	for p, text := range map[string]string{
		filepath.Join(tree, "nrt", "nrt.h"):         "typedef struct nrt_instance_info { uint32_t family; uint32_t size; thing_t thing; } nrt_instance_info_t;\n",
		filepath.Join(vendor, "drv", "thing.h"):     "typedef unsigned long long thing_t;\n",
		filepath.Join(tree, "nrt", "nrt_version.h"): "typedef struct nrt_version { uint64_t rt_major, rt_minor, rt_patch, rt_maintenance; char rt_detail[128]; char git_hash[64]; } nrt_version_t;\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module github.com/nrtabi/nrtabi\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	rc, _, errw := runCLI("release", "new", "--name", "2.28.0", "--headers", tree)
	if rc != 1 || !strings.Contains(errw, "unknown type name") || !strings.Contains(errw, "--cflags '-include FILE'") || strings.Count(strings.TrimSpace(errw), "\n") != 0 {
		t.Fatalf("without the vendor file: exit %d, want 1 and one line naming the flag\n%s", rc, errw)
	}
	if rc, _, errw := runCLI("release", "new", "--name", "2.28.0", "--headers", tree, "--cflags", "-fplugin=evil.so"); rc != 2 || !strings.Contains(errw, `"-fplugin=evil.so"`) {
		t.Errorf("--cflags -fplugin: exit %d %s", rc, errw)
	}
	opts := []string{"--headers", tree, "-I", vendor, "--cflags", "-DNRT_OLD=1 -include drv/thing.h"}
	rc, out, errw := runCLI(append([]string{"release", "new", "--name", "2.28.0"}, opts...)...)
	if rc != 0 {
		t.Fatalf("with -I and --cflags: exit %d\n%s%s", rc, out, errw)
	}
	data, err := os.ReadFile(filepath.Join(root, "spec", "2.28.0", "release.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`include = ["drv/thing.h"]`, `cflags = ["-DNRT_OLD=1"]`, `include_dirs = ["` + vendor + `"]`, `prelude = ["stddef.h"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("[release.headers] lacks %s:\n%s", want, data)
		}
	}
	if rc, out, errw := runCLI(append([]string{"check", "--spec", "2.28.0"}, opts...)...); rc != 0 || !strings.Contains(out, "verdict: CLEAN") {
		t.Errorf("check with the same options: exit %d\n%s%s", rc, out, errw)
	}
}
