package layoutcheck

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// The planted headers of the per-header tests: each fault as a vendor tree
// ships it, with the first error gcc gives for that header alone.
const (
	goodVersion = "#include <stdint.h>\ntypedef struct nrt_version { uint64_t rt_major, rt_minor, rt_patch, rt_maintenance; char rt_detail[128]; char git_hash[64]; } nrt_version_t;\n"
	// innocent uses size_t after <stddef.h>: the combined unit once
	// blamed it for another header's fault.
	innocentSize   = "#include <stddef.h>\nstruct ring { size_t head, tail; };\n"
	missingInc     = "#include <stdint.h>\n#include <ndl/neuron_driver_shared.h>\nstruct drv_window { uint64_t base; };\n"
	assertNoHeader = "#include <stdint.h>\nstatic_assert(sizeof(uint32_t) == 4, \"u32\");\nstruct sa_thing { uint32_t x; };\n"
	syntaxErr      = "#include <stdint.h>\ntypedef struct q { int x; } q_t q2_t;\n"
)

func defaultSpec(t *testing.T) *spec.Spec {
	t.Helper()
	sp, err := compiled.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func compileWith(t *testing.T, dir string, opts HeaderOptions) (*Headers, error) {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	h, err := CompileHeadersContext(t.Context(), dir, opts)
	if err == nil {
		t.Cleanup(h.Close)
	}
	return h, err
}

// TestHeadersEachBrokenUnrelated: a header that includes a file not
// shipped, one that uses static_assert without <assert.h>, and one with a
// syntax error, each next to good headers and all three together, are
// each left out with a warning naming that header and its own first
// error; the good headers' spec struct is read. Against the code before
// per-header units this failed: the tree was an error naming the first
// failing header only.
func TestHeadersEachBrokenUnrelated(t *testing.T) {
	sp := defaultSpec(t)
	faults := map[string]struct{ text, want string }{
		"nrt/drv.h":    {missingInc, `nrt/drv.h: does not compile on its own (declares no spec struct), left out; nrt/drv.h:2:10: fatal error: ndl/neuron_driver_shared.h: No such file or directory`},
		"nrt/assert.h": {assertNoHeader, `nrt/assert.h: does not compile on its own (declares no spec struct), left out; nrt/assert.h:2:15: error: expected declaration specifiers or ‘...’ before ‘sizeof’`},
		"nrt/syn.h":    {syntaxErr, `nrt/syn.h: does not compile on its own (declares no spec struct), left out; nrt/syn.h:2:33: error: expected ‘=’, ‘,’, ‘;’, ‘asm’ or ‘__attribute__’ before ‘q2_t’`},
	}
	run := func(t *testing.T, names ...string) {
		files := map[string]string{"nrt/nrt_version.h": goodVersion, "nrt/ring.h": innocentSize}
		for _, n := range names {
			files[n] = faults[n].text
		}
		dir := writeTree(t, files)
		// Without the prelude: assert.h's static_assert is the fault
		// (TestHeadersPrelude: with it, it compiles).
		h, err := compileWith(t, dir, HeaderOptions{Spec: sp, NoPrelude: true})
		if err != nil {
			t.Fatalf("the tree with %v is refused: %v", names, err)
		}
		if len(h.Warnings) != len(names) {
			t.Fatalf("warnings %q, want one for each of %v", h.Warnings, names)
		}
		for i, n := range names {
			want := filepath.Join(dir, faults[n].want)
			if h.Warnings[i] != want {
				t.Errorf("warning %d:\n got %q\nwant %q", i, h.Warnings[i], want)
			}
		}
		for _, w := range h.Warnings {
			if strings.Contains(w, "ring.h") || strings.Contains(w, "size_t") {
				t.Errorf("an innocent header is blamed: %q", w)
			}
		}
		if strings.Join(h.Roots, " ") != "nrt/nrt_version.h nrt/ring.h" {
			t.Errorf("roots %v, want the two good headers", h.Roots)
		}
		r, err := Check(context.Background(), []string{h.Object}, Options{Spec: sp, StructsSrc: "spec", DebugDirs: []string{t.TempDir()}, Require: []string{"nrt_version_t"}})
		if err != nil {
			t.Fatal(err)
		}
		if r.Exit != 0 {
			t.Errorf("exit %d: %+v", r.Exit, r.Findings)
		}
	}
	// Sorted, as the warnings come in the tree's order.
	for _, names := range [][]string{{"nrt/drv.h"}, {"nrt/assert.h"}, {"nrt/syn.h"}, {"nrt/assert.h", "nrt/drv.h", "nrt/syn.h"}} {
		t.Run(strings.Join(names, "+"), func(t *testing.T) { run(t, names...) })
	}
}

// TestHeadersEachNeeded: a header that defines a spec struct and does not
// compile on its own is an error naming the struct, the header, its first
// error and the fix; -I with the missing header's directory makes it
// compile; without a spec every broken header is an error, as before.
func TestHeadersEachNeeded(t *testing.T) {
	sp := defaultSpec(t)
	needed := "#include <stdint.h>\n#include <ndl/neuron_driver_shared.h>\n/* struct nec_version_info { in a comment, not a definition */\ntypedef struct nrt_instance_info { uint32_t family, size; char arch_name[16]; char device_revision[8]; } nrt_instance_info_t;\n"
	dir := writeTree(t, map[string]string{"nrt/nrt_version.h": goodVersion, "nrt/nrt.h": needed, "nrt/ring.h": innocentSize})
	_, err := compileWith(t, dir, HeaderOptions{Spec: sp})
	var ie *elfread.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("%T %v, want an *InputError", err, err)
	}
	want := dir + "/nrt/nrt.h: declares the spec struct nrt_instance_info_t but does not compile on its own: nrt/nrt.h:2:10: fatal error: ndl/neuron_driver_shared.h: No such file or directory; fix: if it includes a header the tree does not ship, give that header's directory with -I DIR"
	if !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("error:\n %q\nwant it to start\n %q", err, want)
	}
	// The driver's header, supplied: it compiles, no warning.
	drv := writeTree(t, map[string]string{"ndl/neuron_driver_shared.h": "#define NDL_SHARED 1\n"})
	h, err := compileWith(t, dir, HeaderOptions{Spec: sp, IncludeDirs: []string{drv}})
	if err != nil || len(h.Warnings) != 0 {
		t.Fatalf("with -I: %v, warnings %q", err, h.Warnings)
	}
	if _, err := compileWith(t, dir, HeaderOptions{Spec: sp, IncludeDirs: []string{filepath.Join(drv, "nope")}}); err == nil || !strings.Contains(err.Error(), "nope: -I no such file or directory") {
		t.Errorf("-I a missing directory: %v", err)
	}
	// A -I directory is searched by the pre-scan too: /dev's zero is
	// refused before any compiler reads it.
	zero := writeTree(t, map[string]string{"nrt/z.h": "#include <zero>\n"})
	if _, err := compileWith(t, zero, HeaderOptions{Spec: sp, IncludeDirs: []string{"/dev"}}); err == nil || !strings.Contains(err.Error(), "nrt/z.h:1: #include <zero>, which is a device") {
		t.Errorf("-I /dev and #include <zero>: %v", err)
	}
	// No spec: the first broken header is the error, as before.
	if _, err := compileWith(t, dir, HeaderOptions{}); err == nil || !strings.Contains(err.Error(), "nrt/nrt.h: does not compile: nrt/nrt.h:2:10: fatal error") {
		t.Errorf("no spec: %v", err)
	}
	// --include of the good headers leaves the broken one unread.
	if h, err := compileWith(t, dir, HeaderOptions{Spec: sp, Include: []string{"nrt/nrt_version.h", "nrt/ring.h"}}); err != nil || len(h.Warnings) != 0 {
		t.Errorf("--include: %v", err)
	}
}

// TestHeadersEachIncludedElsewhere: a header that is not self-contained
// (it needs <stdint.h> from its includer) and defines a spec struct is no
// error when a header that compiles includes it: the struct is read there.
func TestHeadersEachIncludedElsewhere(t *testing.T) {
	sp := defaultSpec(t)
	dir := writeTree(t, map[string]string{
		"nrt/nrt.h":         "#include <stdint.h>\n#include \"nrt_version.h\"\n",
		"nrt/nrt_version.h": strings.TrimPrefix(goodVersion, "#include <stdint.h>\n"),
	})
	h, err := compileWith(t, dir, HeaderOptions{Spec: sp, NoPrelude: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Warnings) != 1 || !strings.Contains(h.Warnings[0], "nrt/nrt_version.h: does not compile on its own (its structs were read where another header includes it)") {
		t.Errorf("warnings %q", h.Warnings)
	}
}

// TestDeclaredStructs: the pre-scan finds definitions under every C name
// of a spec struct, not declarations, uses or comments.
func TestDeclaredStructs(t *testing.T) {
	names := specStructNames(defaultSpec(t))
	for _, c := range []struct{ src, want string }{
		{"struct nrt_version { int a; };", "nrt_version_t"},
		{"typedef struct { int a; } nrt_version_t;", "nrt_version_t"},
		{"typedef struct nrt_version nrt_version_t;", "nrt_version_t"},
		{"struct nrt_version;\nvoid f(struct nrt_version *v);", ""},
		{"/* struct nrt_version { */ // struct nrt_instance_info {\n", ""},
		{"struct nrt_instance_info {\n int a; } x; union nrt_version\n{ int b; };", "nrt_instance_info_t nrt_version_t"},
	} {
		if got := strings.Join(declaredStructs([]byte(c.src), names), " "); got != c.want {
			t.Errorf("%q: %q, want %q", c.src, got, c.want)
		}
	}
}

// FuzzDeclaredStructs: any header text gives sorted, distinct spec names,
// without a panic.
func FuzzDeclaredStructs(f *testing.F) {
	f.Add([]byte("typedef struct nrt_version { int a; } nrt_version_t;"))
	f.Add([]byte("/* unterminated struct nrt_version {"))
	f.Add([]byte("}}}; typedef union x y; struct { } nrt_instance_info_t;"))
	names := map[string]string{"nrt_version": "nrt_version_t", "nrt_version_t": "nrt_version_t", "nrt_instance_info_t": "nrt_instance_info_t"}
	ident := regexp.MustCompile(`^[a-z_]+$`)
	f.Fuzz(func(t *testing.T, src []byte) {
		got := declaredStructs(src, names)
		for i, n := range got {
			if !ident.MatchString(n) || names[n] != n || i > 0 && got[i-1] >= n {
				t.Fatalf("%q from %q", got, src)
			}
		}
	})
}
