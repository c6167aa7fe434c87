package layoutcheck

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/hostile"
	"github.com/nrtabi/nrtabi/readers/elfread"
)

// hostileHeaderWait is how long a crafted header tree may take before the
// test calls it hung: well over the compile's own limit.
const hostileHeaderWait = 20 * time.Second

// TestHeadersHostile: every crafted header tree ends within its limits with
// one line naming the header and the limit it hit, or compiles.
func TestHeadersHostile(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	for _, c := range hostile.HeaderCases() {
		t.Run(c.Name, func(t *testing.T) {
			dir, err := c.Build(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			type result struct {
				h   *Headers
				err error
			}
			done := make(chan result, 1)
			start := time.Now()
			// A smaller memory limit than the default, so that the
			// exponential cases end quickly on a loaded machine.
			opts := HeaderOptions{Memory: 256 << 20}
			if c.Slow {
				opts.Timeout = 3 * time.Second
			}
			go func() {
				h, err := CompileHeadersContext(t.Context(), dir, opts)
				done <- result{h, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(hostileHeaderWait):
				t.Fatalf("still compiling after %v", hostileHeaderWait)
			}
			took := time.Since(start)
			if c.Want == "" {
				if r.err != nil {
					t.Fatalf("%v", r.err)
				}
				r.h.Close()
				return
			}
			if r.err == nil {
				r.h.Close()
				t.Fatalf("compiled, want an error with %q", c.Want)
			}
			msg := r.err.Error()
			var ie *elfread.InputError
			if !errors.As(r.err, &ie) {
				t.Errorf("%T, want *InputError: %.300q", r.err, msg)
			}
			if !(strings.Contains(msg, c.Want) || c.Alt != "" && strings.Contains(msg, c.Alt)) || strings.ContainsAny(msg, "\n\r\x1b\x07") || len(msg) > 2000 {
				t.Errorf("error %.600q: want one line of under 2000 bytes, escaped, with %q", msg, c.Want)
			}
			t.Logf("%s: %s", took.Round(time.Millisecond), msg)
		})
	}
}

// TestIncludeNames: the names the pre-scan reads, in the forms a header
// writes them.
func TestIncludeNames(t *testing.T) {
	src := "#include \"a.h\"\n  #  include_next <b/c.h> // x\n#if __has_include(<d.h>) && __has_include_next ( \"e.h\" )\n#endif\n" +
		"#include \\\n  \"f.h\"\n#include MACRO\n#define X #include \"g.h\"\n#embed \"/dev/zero\"\nint include;\n#import\"h.h\"\r\n#include <unterminated\n"
	var got []string
	for _, r := range includeNames([]byte(src)) {
		got = append(got, r.Directive+" "+r.quoted()+" @"+strconv.Itoa(r.Line))
	}
	want := []string{`#include "a.h" @1`, `#include_next <b/c.h> @2`, `__has_include_next "e.h" @3`, `__has_include <d.h> @3`,
		`#include "f.h" @5`, `#embed "/dev/zero" @9`, `#import "h.h" @11`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestIncludeTrack: the -H lines name the header the compiler is in, and
// are not kept.
func TestIncludeTrack(t *testing.T) {
	var tr includeTrack
	for _, l := range []string{". /h/a.h", ".. /usr/include/stdint.h", "... /usr/include/x.h", ".. /h/b.h"} {
		if tr.keep(l) {
			t.Errorf("kept %q", l)
		}
	}
	if strings.Join(tr.stack, " ") != "/h/a.h /h/b.h" {
		t.Errorf("stack %q", tr.stack)
	}
	if !tr.keep("/h/b.h:1:2: error: #include nested depth 201 exceeds maximum of 200") || !tr.depth {
		t.Error("the depth error was not noticed")
	}
	if tr.keep("Multiple include guards may be useful for:") || tr.keep("/h/c.h") || !tr.keep("cc1: out of memory allocating 8 bytes") {
		t.Error("the guard list is kept, or what follows it dropped")
	}
}

// FuzzIncludeNames: the pre-scan never panics, and every name it reports
// is one line, found in the text between its quotes.
func FuzzIncludeNames(f *testing.F) {
	f.Add([]byte("#include \"a.h\"\n#include <b.h>\n"))
	f.Add([]byte("#if __has_include(\"/dev/zero\") || __has_include_next(<x>)\n"))
	f.Add([]byte("#  include \\\r\n \"a\\\nb.h\""))
	f.Add([]byte("#embed </dev/zero\n#include\"\"\n__has_include(\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		text := strings.ReplaceAll(strings.ReplaceAll(string(src), "\\\r\n", ""), "\\\n", "")
		for _, r := range includeNames(src) {
			if r.Name == "" || strings.Contains(r.Name, "\n") || r.Line < 1 || r.Line > strings.Count(string(src), "\n")+1 {
				t.Fatalf("bad ref %+v from %q", r, src)
			}
			if !strings.Contains(text, r.quoted()) && !strings.Contains(strings.ReplaceAll(text, "\r", ""), r.quoted()) {
				t.Fatalf("%s is not in the text %q", r.quoted(), src)
			}
		}
	})
}

// TestHeadersLinkedRoot: a header directory that is itself a symbolic link
// (an include directory pointing at a versioned one) is read, and a link
// inside the tree to a header in it is fine.
func TestHeadersLinkedRoot(t *testing.T) {
	dir := writeTree(t, map[string]string{"v1/x.h": "struct s { int a; };\n", "v1/y.h": "#include \"alias.h\"\n"})
	if err := os.Symlink("x.h", filepath.Join(dir, "v1", "alias.h")); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "include")
	if err := os.Symlink("v1", link); err != nil {
		t.Fatal(err)
	}
	if h := compileHeaders(t, link); strings.Join(h.Roots, " ") != "x.h y.h" {
		t.Errorf("roots %v", h.Roots)
	}
}
