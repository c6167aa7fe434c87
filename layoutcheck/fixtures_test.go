package layoutcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/specsame"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// The fixtures are real objects compiled at test time by gcc -g from the
// generated header, and real shared objects linked with the generated
// version scripts. They are built once per test binary.

const genDir = "../generated/" + spec.Default + "/c"

var (
	fixOnce sync.Once
	fixErr  error
	fix     *fixtures
)

type fixtures struct {
	dir        string
	sp         *spec.Spec
	typesObj   string // every spec struct, relocatable
	libnrt     string // clean libnrt.so.1: 20 callbacks @@NRT_2.0.0, DWARF of every struct
	libnccom   string // clean libnccom.so.2: the generated stub linked against libnrt
	libnrtDir  string
	nccomDir   string
	headerText string
}

func loadFixtures(t testing.TB) *fixtures {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	fixOnce.Do(func() { fix, fixErr = buildFixtures() })
	if fixErr != nil {
		t.Fatalf("building fixtures: %v", fixErr)
	}
	return fix
}

func buildFixtures() (*fixtures, error) {
	dir, err := os.MkdirTemp("", "layoutcheck-fixtures-")
	if err != nil {
		return nil, err
	}
	f := &fixtures{dir: dir}
	if f.sp, err = compiled.Load(spec.Default); err != nil {
		return nil, err
	}
	for _, name := range []string{gen.HeaderName, gen.StubSource, "libnrt.map", "libnccom.map"} {
		b, err := os.ReadFile(filepath.Join(genDir, name))
		if err != nil {
			return nil, err
		}
		if name == gen.HeaderName {
			f.headerText = string(b)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return nil, err
		}
	}
	// Every struct of the header, kept in the DWARF although unused.
	if err := writeFile(dir, "types.c", "#define _GNU_SOURCE\n#include \""+gen.HeaderName+"\"\n"); err != nil {
		return nil, err
	}
	if err := cc.Object(dir, "types.c", "types.o", "-fno-eliminate-unused-debug-types"); err != nil {
		return nil, err
	}
	f.typesObj = filepath.Join(dir, "types.o")
	if err := writeFile(dir, "reverse.c", reverseSource(f.sp, nil)); err != nil {
		return nil, err
	}
	f.libnrtDir = filepath.Join(dir, "nrt")
	f.libnrt, err = f.buildLibnrt("nrt", "libnrt.map", nil)
	if err != nil {
		return nil, err
	}
	f.nccomDir = filepath.Join(dir, "nccom")
	f.libnccom, err = f.buildLibnccom("nccom", f.libnrtDir, nil)
	return f, err
}

func writeFile(dir, name, text string) error {
	return os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
}

// reverseSource defines every reverse callback (and any extra symbols) as a
// plain function; the link contract does not look at their C types.
func reverseSource(sp *spec.Spec, extra []string) string {
	var b strings.Builder
	b.WriteString("/* the 20 reverse callbacks as plain definitions */\n")
	for _, r := range sp.Reverse {
		fmt.Fprintf(&b, "void %s(void) {}\n", r.Name)
	}
	for _, e := range extra {
		fmt.Fprintf(&b, "void %s(void) {}\n", e)
	}
	b.WriteString("void nrt_internal_helper(void) {}\n")
	return b.String()
}

// buildLibnrt links libnrt.so.1 in dir/sub from reverse.c and types.o with a
// version script; extraInputs are linked too.
func (f *fixtures) buildLibnrt(sub, mapFile string, extraInputs []string, flags ...string) (string, error) {
	out := filepath.Join(f.dir, sub)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	inputs := append([]string{filepath.Join(f.dir, "reverse.c"), f.typesObj}, extraInputs...)
	script := ""
	if mapFile != "" {
		script = filepath.Join(f.dir, mapFile)
	}
	if err := cc.Shared(out, "libnrt.so.1", f.sp.Release.LibNRT.SONAME, script, inputs, flags...); err != nil {
		return "", err
	}
	return filepath.Join(out, "libnrt.so.1"), nil
}

// buildLibnccom links the generated stub as libnccom.so.2 against the
// libnrt.so.1 in nrtDir.
func (f *fixtures) buildLibnccom(sub, nrtDir string, defines []string, extraInputs ...string) (string, error) {
	out := filepath.Join(f.dir, sub)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	inputs := append([]string{filepath.Join(f.dir, gen.StubSource)}, extraInputs...)
	flags := append(append([]string{"-I" + f.dir}, defines...), "-L"+nrtDir, "-l:libnrt.so.1")
	if err := cc.Shared(out, "libnccom.so.2", f.sp.Release.LibNCCOM.SONAME, filepath.Join(f.dir, "libnccom.map"), inputs, flags...); err != nil {
		return "", err
	}
	return filepath.Join(out, "libnccom.so.2"), nil
}

var staticAssert = regexp.MustCompile(`(?m)^_Static_assert\(.*\n`)

// faultObject compiles the header with one struct member line replaced (and
// the header's own _Static_asserts removed, which would reject the fault).
func (f *fixtures) faultObject(t *testing.T, name, oldLine, newLine string) string {
	t.Helper()
	h := staticAssert.ReplaceAllString(f.headerText, "")
	if !strings.Contains(h, oldLine) {
		t.Fatalf("fixture %s: the header has no line %q", name, oldLine)
	}
	h = strings.Replace(h, oldLine, newLine, 1)
	dir := filepath.Join(f.dir, "fault-"+name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(dir, gen.HeaderName, h); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(dir, "types.c", "#define _GNU_SOURCE\n#include \""+gen.HeaderName+"\"\n"); err != nil {
		t.Fatal(err)
	}
	if err := cc.Object(dir, "types.c", "types.o", "-fno-eliminate-unused-debug-types"); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "types.o")
}

func TestMain(m *testing.M) {
	// Debian's debuginfod package sets DEBUGINFOD_URLS for login shells; the
	// tests never download from a server they did not start.
	os.Unsetenv("DEBUGINFOD_URLS")
	code := m.Run()
	if fix != nil {
		os.RemoveAll(fix.dir)
	}
	os.Exit(specsame.AfterTests(sarifLogs.After(code)))
}
