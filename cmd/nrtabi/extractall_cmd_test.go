package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExtractAllCmd: extract --all of the generated header's object at -j 1
// and -j 2 writes the same fragment (to -o and to stdout), which check
// then passes; the counted skips go to stderr; -j below 1 and --all beside
// --struct are usage errors that name the flag, and nothing is written.
func TestExtractAllCmd(t *testing.T) {
	obj := typesObject(t, "", "")
	dir := t.TempDir()
	frag := filepath.Join(dir, "frag", "structs.toml")
	rc, out, errw := runLayoutCLI("extract", "--all", "-j", "1", "-o", frag, obj)
	if rc != 0 || out != "" {
		t.Fatalf("extract --all -j 1 -o: exit %d, stdout %q, stderr %s", rc, out, errw)
	}
	one, err := os.ReadFile(frag)
	if err != nil {
		t.Fatal(err)
	}
	rc, two, errw2 := runLayoutCLI("extract", "--all", "-j", "2", obj)
	if rc != 0 || two != string(one) || errw2 != errw {
		t.Fatalf("extract --all -j 2 to stdout: exit %d, same bytes as -j 1: %v, stderr %q against %q", rc, two == string(one), errw2, errw)
	}
	// A -j far beyond the work is as many workers as there is work.
	if rc, huge, _ := runLayoutCLI("extract", "--all", "-j", "9223372036854775807", obj); rc != 0 || huge != two {
		t.Fatalf("extract --all -j MaxInt64: exit %d, same bytes: %v", rc, huge == two)
	}
	for _, want := range []string{`name = "nec_version_info_t"`, "[[enum]]"} {
		if !strings.Contains(two, want) {
			t.Errorf("the fragment lacks %s", want)
		}
	}
	if rc, out, errw := runLayoutCLI("check", "--spec", filepath.Dir(frag), obj); rc != 0 {
		t.Fatalf("check against the --all fragment: exit %d\n%s%s", rc, out, errw)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"extract", "--all", "-j", "0", "-o", filepath.Join(dir, "none.toml"), obj}, "nrtabi extract: -j 0: the number of workers is at least 1"},
		{[]string{"extract", "--all", "--struct", "nec_version_info_t", obj}, "nrtabi extract: --all extracts every struct; give it or --struct, not both"},
	} {
		rc, out, errw := runLayoutCLI(c.args...)
		if rc != 2 || out != "" || !strings.HasPrefix(errw, c.want+"\n") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, rc, out, errw, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "none.toml")); !os.IsNotExist(err) {
		t.Errorf("a refused -j wrote its -o file: %v", err)
	}
}

// TestExtractAllTooLarge: a fragment larger than one spec file may hold is
// written whole and kept, and the exit status and one stderr line say
// that check cannot load it (the bound lowered to 1 KiB for the test).
func TestExtractAllTooLarge(t *testing.T) {
	obj := typesObject(t, "", "")
	saved := maxFragmentBytes
	maxFragmentBytes = 1 << 10
	defer func() { maxFragmentBytes = saved }()
	frag := filepath.Join(t.TempDir(), "frag", "structs.toml")
	rc, out, errw := runLayoutCLI("extract", "--all", "-o", frag, obj)
	b, err := os.ReadFile(frag)
	if err != nil {
		t.Fatalf("the fragment was not kept: %v (exit %d, stderr %s)", err, rc, errw)
	}
	want := "more than the 1024 one spec file may hold (spec.MaxSpecFileSize): check and diff cannot load it"
	if rc != 1 || out != "" || !strings.Contains(errw, want) || !strings.Contains(errw, fmt.Sprintf("the fragment is %d bytes", len(b))) {
		t.Fatalf("extract --all of a fragment past the bound: exit %d, stdout %q, stderr %q; want 1 and %q", rc, out, errw, want)
	}
	maxFragmentBytes = saved
	if rc, _, errw := runLayoutCLI("extract", "--all", "-o", frag, obj); rc != 0 {
		t.Fatalf("under the real bound: exit %d, stderr %s", rc, errw)
	}
}
