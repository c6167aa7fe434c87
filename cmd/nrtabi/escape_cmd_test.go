package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/hostile"
)

// assertNoTerminalBytes: what a command printed holds no control byte but
// the line breaks and tabs of its own format, no DEL, no C1 CSI (raw 0x9b
// or U+009B), and no line that an input forged.
func assertNoTerminalBytes(t *testing.T, what, s string) {
	t.Helper()
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 && b != '\n' && b != '\t' || b == 0x7f || b == 0x9b {
			t.Errorf("%s: raw byte %#x at %d:\n%s", what, b, i, s)
			return
		}
	}
	if strings.Contains(s, "\u009b") {
		t.Errorf("%s: a raw U+009B:\n%s", what, s)
	}
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "forged") {
			t.Errorf("%s: an input forged a line:\n%s", what, s)
		}
	}
}

// TestTerminalEscapesInOutput: DWARF member and type names, file names and
// debug-link names carrying ESC [2J, BEL, a newline, DEL and 0x9b reach
// check's text report, show, show --c, extract's comments, release new and
// the error lines
// escaped; show --c stays C that compiles and defines nothing (the names
// that would end its comments and strings stay inside them).
func TestTerminalEscapesInOutput(t *testing.T) {
	needCC(t)
	dir := t.TempDir()
	objs, err := hostile.TerminalNames(dir)
	if err != nil {
		t.Fatal(err)
	}
	names, link := objs[0].Path, objs[1].Path
	type want struct {
		rc     int
		stdout string // a piece of stdout that shows the bytes escaped
		stderr string
	}
	esc := `\x1b[2J\a\nforged: ok\x7f\x9b`
	for _, c := range []struct {
		args []string
		want want
	}{
		{[]string{"check", names}, want{12, "== " + dir + "/escape" + esc + ".o", ""}},
		{[]string{"check", "--require", hostile.StructName, names}, want{12, "renamed to " + esc, ""}},
		{[]string{"show", hostile.StructName, names}, want{12, "u64" + esc, ""}},
		{[]string{"show", "--c", hostile.StructName, names}, want{0, `"nrt_version_t.x*/ int evil; /*\");int evil2;//\?\?/: offset"`, ""}},
		{[]string{"show", "no_such_struct", names}, want{1, "", "escape" + esc + ".o: no struct no_such_struct"}},
		// elfread's errors are one line already (a newline in them is
		// "\n"), so the error line shows that backslash doubled.
		{[]string{"check", link}, want{1, "", `\x1b[2J\a\\nforged: ok\x7f\x9b.debug`}},
		{[]string{"show", hostile.StructName, link}, want{1, "", `\x1b[2J\a\\nforged: ok\x7f\x9b.debug`}},
		{[]string{"extract", "--struct", hostile.StructName, names}, want{0, "# file: " + dir + "/escape" + esc + ".o", ""}},
		{[]string{"release", "new", "--name", "x", "--force", "--out", filepath.Join(t.TempDir(), "x"), "--binary", names}, want{-1, "read " + dir + "/escape" + esc + ".o", ""}},
	} {
		var out, errw bytes.Buffer
		rc := run(c.args, &out, &errw)
		what := strings.Join(c.args, " ")
		if c.want.rc >= 0 && rc != c.want.rc {
			t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", what, rc, c.want.rc, out.String(), errw.String())
		}
		assertNoTerminalBytes(t, what+" (stdout)", out.String())
		assertNoTerminalBytes(t, what+" (stderr)", errw.String())
		if !strings.Contains(out.String(), c.want.stdout) {
			t.Errorf("%s: stdout lacks %q:\n%s", what, c.want.stdout, out.String())
		}
		if !strings.Contains(errw.String(), c.want.stderr) {
			t.Errorf("%s: stderr lacks %q:\n%s", what, c.want.stderr, errw.String())
		}
		if c.want.stderr != "" && strings.Count(errw.String(), "\n") != 1 {
			t.Errorf("%s: want one error line, got:\n%s", what, errw.String())
		}
		if c.args[1] == "--c" {
			compilesToNothing(t, out.Bytes())
		}
	}
}

// compilesToNothing: the C compiles with -Wall -Wextra -Werror and its
// object defines no symbol (a name that left its comment or string would
// have declared one).
func compilesToNothing(t *testing.T, src []byte) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.c"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	// c11 reads trigraphs (??/ is a backslash); gnu11 predefines unix.
	for _, std := range []string{"-std=c11", "-std=gnu11"} {
		if err := cc.Run(dir, std, "-Wall", "-Wextra", "-Werror", "-c", "-o", "s.o", "s.c"); err != nil {
			t.Fatalf("show --c output does not compile with %s: %v\n%s", std, err, src)
		}
	}
	nm, err := exec.Command("nm", filepath.Join(dir, "s.o")).CombinedOutput()
	if err != nil {
		t.Skipf("no nm: %v", err)
	}
	if len(bytes.TrimSpace(nm)) != 0 {
		t.Fatalf("show --c output defines symbols:\n%s\n%s", nm, src)
	}
}
