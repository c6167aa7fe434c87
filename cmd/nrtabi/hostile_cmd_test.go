package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/internal/hostile"
	"github.com/nrtabi/nrtabi/internal/spectest"
	"github.com/nrtabi/nrtabi/spec"
)

// TestHostileInputsUnderMemoryLimit runs the built binary, with a 2 GiB
// address space, on every crafted input with every command that reads it:
// each run ends with exit 1 and a one-line message, or with the command's
// normal verdict, never a crash (exit 2), a hang or an out-of-memory kill,
// and prints no byte from the input that a terminal would act on.
func TestHostileInputsUnderMemoryLimit(t *testing.T) {
	needCC(t)
	needLimitShell(t)
	bin := nrtabiBinary(t)
	dir := t.TempDir()
	objs, err := hostile.Build(dir, hostile.BombSize)
	if err != nil {
		t.Fatal(err)
	}
	named, err := hostile.TerminalNames(dir)
	if err != nil {
		t.Fatal(err)
	}
	objs = append(objs, named...)
	type run struct {
		name string
		args []string
	}
	var runs []run
	for _, o := range objs {
		runs = append(runs,
			run{o.Name + "/check", []string{"check", "--debug-dir", dir, o.Path}},
			run{o.Name + "/show", []string{"show", hostile.StructName, o.Path, "--debug-dir", dir}},
			run{o.Name + "/extract", []string{"extract", "--struct", hostile.StructName, "--debug-dir", dir, o.Path}},
			run{o.Name + "/release-new", []string{"release", "new", "--name", "x", "--force", "--out", filepath.Join(t.TempDir(), "x"), "--binary", o.Path, "--debug-dir", dir}},
		)
	}
	for _, c := range append(hostile.SpecCases(), hostile.InjectionCases()...) {
		d := spectest.CopyRelease(t, spec.Embedded, spec.Default)
		if err := c.Apply(d); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run{"spec-" + c.Name + "/spec-validate", []string{"spec", "validate", "--spec", d}})
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			code, stdout, stderr, _ := runLimited(t, bin, r.args)
			msg := strings.TrimRight(stderr, "\n")
			switch {
			case code == cli.ExitError:
				// One line; spec validate adds a count line after its one error.
				lines := strings.Count(msg, "\n") + 1
				if msg == "" || lines > 1 && !((r.args[0] == "spec" || r.args[0] == "release") && lines == 2) {
					t.Fatalf("exit 1 wants one line on stderr, got %q", msg)
				}
			case code == 0, (r.args[0] == "check" || r.args[0] == "show") && code&^(4|8) == 0:
				// a verdict (4 compatible, 8 incompatible changes)
			default:
				t.Fatalf("exit %d (a crash or usage error), stderr: %.400s", code, msg)
			}
			if strings.Contains(msg, "goroutine ") || strings.Contains(msg, "internal error") {
				t.Fatalf("a crash: %.400s", msg)
			}
			if len(stdout) > 1<<20 {
				t.Fatalf("%d bytes of output", len(stdout))
			}
			if r.args[0] != "spec" {
				assertNoTerminalBytes(t, "stdout", stdout)
				assertNoTerminalBytes(t, "stderr", stderr)
			}
		})
	}
}
