package hostile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// HeaderCase is a crafted header tree for --headers (check, extract,
// release new): each once made the compiler read without end, hang, grow
// past 2 GiB or flood nrtabi with output, or smuggled a declaration in
// through a file name.
type HeaderCase struct {
	Name string
	// Build writes the case under dir (an empty directory) and returns the
	// directory to give --headers: dir itself, or a directory under it
	// when the case needs something outside the tree.
	Build func(dir string) (string, error)
	// Want is a fragment of the one error line; "" when the tree must
	// compile (within the limits) and be read.
	Want string
	// Alt is another fragment that passes too: on a loaded machine the
	// wall clock may stop a run before it fills its memory.
	Alt string
	// Slow: only the wall-clock limit stops it, so a test gives it a short
	// one.
	Slow bool
}

// The limit each case runs into, as the error line names it.
const (
	WantNotRegular = "not a regular file"
	WantOutside    = "outside the headers directory"
	WantName       = "cannot be #included by name"
	WantMemory     = "memory limit"
	WantTime       = "time limit"
	WantOutput     = "output limit"
	WantDepth      = "include depth limit"
	WantCompile    = "does not compile"
)

// RingHeaders is how many headers include each other in the mutual cases.
const RingHeaders = 4000

// HeaderCases are the crafted header trees.
func HeaderCases() []HeaderCase {
	return []HeaderCase{
		{Name: "include-dev-zero", Want: WantNotRegular, Build: files(map[string]string{
			"a.h": "#include \"/dev/zero\"\n"})},
		{Name: "include-dev-zero-angled", Want: WantNotRegular, Build: files(map[string]string{
			"a.h": "#  include  <../../dev/zero>\n"})},
		{Name: "include-proc-pagemap", Want: WantNotRegular, Build: files(map[string]string{
			"a.h": "#include \"/proc/self/pagemap\"\n"})},
		{Name: "has-include-dev-zero", Want: WantNotRegular, Build: files(map[string]string{
			"a.h": "#if __has_include(\"/dev/zero\")\n#endif\n"})},
		// A computed include escapes any reading of the text: only the
		// memory limit stops gcc reading /dev/zero.
		{Name: "include-dev-zero-macro", Want: WantMemory, Alt: WantTime, Build: files(map[string]string{
			"a.h": "#define Z \"/dev/ze\" \"ro\"\n#define ZZ </dev/zero>\n#include ZZ\n"})},
		{Name: "include-fifo", Want: WantNotRegular, Build: func(dir string) (string, error) {
			if err := writeFiles(dir, map[string]string{"a.h": "#include \"pipe.h\"\n"}); err != nil {
				return "", err
			}
			return dir, syscall.Mkfifo(filepath.Join(dir, "pipe.h"), 0o644)
		}},
		{Name: "include-fifo-outside", Want: WantNotRegular, Build: outsideFIFO("#include \"../outside/pipe\"\n")},
		{Name: "symlink-fifo-outside", Want: WantOutside, Build: func(dir string) (string, error) {
			inc, err := outsideFIFO("#include \"link.h\"\n")(dir)
			if err != nil {
				return "", err
			}
			return inc, os.Symlink("../outside/pipe", filepath.Join(inc, "link.h"))
		}},
		{Name: "symlink-dev-zero", Want: WantOutside, Build: func(dir string) (string, error) {
			if err := writeFiles(dir, map[string]string{"a.h": "#include \"zero.h\"\n"}); err != nil {
				return "", err
			}
			return dir, os.Symlink("/dev/zero", filepath.Join(dir, "zero.h"))
		}},
		// Opening a FIFO blocks until a writer comes: only the wall clock
		// ends it.
		{Name: "include-fifo-macro", Want: WantTime, Slow: true, Build: outsideFIFO("#define P \"../outside/pipe\"\n#include P\n")},
		{Name: "exponential-macro", Want: WantMemory, Alt: WantTime, Build: files(map[string]string{"a.h": exponentialMacro()})},
		{Name: "error-flood", Want: WantCompile, Build: files(map[string]string{"a.h": errorFlood()})},
		{Name: "output-flood", Want: WantOutput, Build: files(map[string]string{"a.h": outputFlood()})},
		{Name: "self-include", Want: WantDepth, Build: files(map[string]string{"a.h": "#include \"a.h\"\nstruct s { int a; };\n"})},
		{Name: "mutual-4000", Want: WantDepth, Build: func(dir string) (string, error) { return dir, mutual(dir, false) }},
		{Name: "mutual-4000-guarded", Want: "", Build: func(dir string) (string, error) { return dir, mutual(dir, true) }},
		// The name ends the generated #include line and declares a struct
		// of its own.
		{Name: "name-quote-newline", Want: WantName, Build: files(map[string]string{
			"x": "",
			"x\"\nstruct from_name { int a; };\n#define Z .h": "struct s { int a; };\n",
		})},
		{Name: "name-escape", Want: WantName, Build: files(map[string]string{
			"a\x1b[2J\x07.h": "struct s { int a; };\n"})},
		{Name: "name-backslash", Want: WantName, Build: files(map[string]string{
			"a\\b.h": "struct s { int a; };\n"})},
	}
}

func files(m map[string]string) func(string) (string, error) {
	return func(dir string) (string, error) { return dir, writeFiles(dir, m) }
}

func writeFiles(dir string, m map[string]string) error {
	for name, text := range m {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// outsideFIFO is a tree dir/include holding a.h, next to a FIFO at
// dir/outside/pipe.
func outsideFIFO(header string) func(string) (string, error) {
	return func(dir string) (string, error) {
		inc := filepath.Join(dir, "include")
		if err := writeFiles(inc, map[string]string{"a.h": header}); err != nil {
			return "", err
		}
		if err := os.MkdirAll(filepath.Join(dir, "outside"), 0o755); err != nil {
			return "", err
		}
		return inc, syscall.Mkfifo(filepath.Join(dir, "outside", "pipe"), 0o644)
	}
}

// exponentialMacro doubles a token 40 times inside a stringized argument,
// which gcc expands in full before it stringizes: 2^40 tokens.
func exponentialMacro() string {
	var b strings.Builder
	b.WriteString("#define S(x) #x\n#define X(x) S(x)\n#define A0 x\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "#define A%d A%d A%d\n", i, i-1, i-1)
	}
	b.WriteString("const char *p = X(A40);\n")
	return b.String()
}

// errorFlood is 2^30 declarations that are each an error.
func errorFlood() string {
	var b strings.Builder
	b.WriteString("#define E0 int int;\n")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "#define E%d E%d E%d\n", i, i-1, i-1)
	}
	b.WriteString("E30\n")
	return b.String()
}

// outputFlood pastes an identifier of 2^22 bytes and names it as an
// unknown type 256 times: every error quotes it, 4 MiB a line, a gigabyte
// in all without a bound on the errors.
func outputFlood() string {
	var b strings.Builder
	b.WriteString("#define CAT(a, b) a##b\n#define D(x) CAT(x, x)\n#define L ")
	for range 22 {
		b.WriteString("D(")
	}
	b.WriteString("x")
	for range 22 {
		b.WriteString(")")
	}
	b.WriteString("\n")
	for i := range 256 {
		fmt.Fprintf(&b, "L v%d;\n", i)
	}
	return b.String()
}

// mutual writes RingHeaders headers that include each other: each its
// two children in a binary tree and its parent. Without guards the
// nesting never ends; with them each is read once, nested 12 deep.
func mutual(dir string, guarded bool) error {
	for i := range RingHeaders {
		var b strings.Builder
		if guarded {
			fmt.Fprintf(&b, "#ifndef H%04d\n#define H%04d\n", i, i)
		}
		for _, j := range []int{2*i + 1, 2*i + 2, (i - 1) / 2} {
			if j < RingHeaders && j != i {
				fmt.Fprintf(&b, "#include \"h%04d.h\"\n", j)
			}
		}
		fmt.Fprintf(&b, "struct s%04d { int a; };\n", i)
		if guarded {
			b.WriteString("#endif\n")
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("h%04d.h", i)), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}
