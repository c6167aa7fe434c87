package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/hostile"
)

// TestExtractHostileUnderMemoryLimit runs the built binary, with a 2 GiB
// address space and hangLimit, on the extract inputs of
// internal/hostile's outtarget.go, dwarfnames.go and odr.go: -o naming a
// FIFO, a socket, a symbolic link, a directory or a device node ends with
// exit 1 and one line (a FIFO is never opened, so nothing blocks); extract
// --all of the hostile names and the ODR conflicts ends with exit 0.
// Neither prints a stack trace or a byte a terminal would act on.
func TestExtractHostileUnderMemoryLimit(t *testing.T) {
	needCC(t)
	needLimitShell(t)
	bin := nrtabiBinary(t)
	dir := t.TempDir()
	obj := typesObject(t, "", "")
	targets, err := hostile.OutTargets(dir)
	if err != nil {
		t.Fatal(err)
	}
	names, err := hostile.DWARFNames(dir)
	if err != nil {
		t.Fatal(err)
	}
	empty, err := hostile.DWARFEmptyNames(dir)
	if err != nil {
		t.Fatal(err)
	}
	odr, err := hostile.ODRObject(dir)
	if err != nil {
		t.Fatal(err)
	}
	type run struct {
		name string
		args []string
		exit int
	}
	var runs []run
	for _, tg := range targets {
		runs = append(runs,
			run{"o-" + filepath.Base(tg.Path), []string{"extract", "--struct", "nec_version_info_t", "-o", tg.Path, obj}, 1},
			run{"all-o-" + filepath.Base(tg.Path), []string{"extract", "--all", "-o", tg.Path, names.Path}, 1})
	}
	for _, o := range []hostile.ELFCase{names, empty, odr} {
		runs = append(runs, run{"all-" + o.Name, []string{"extract", "--all", "-o", filepath.Join(dir, o.Name, "structs.toml"), o.Path}, 0})
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			code, stdout, stderr, _ := runLimited(t, bin, r.args)
			msg := strings.TrimRight(stderr, "\n")
			if code != r.exit || r.exit == 1 && (msg == "" || strings.Contains(msg, "\n")) {
				t.Fatalf("exit %d (want %d), stderr %q", code, r.exit, msg)
			}
			if strings.Contains(msg, "goroutine ") || strings.Contains(msg, "internal error") {
				t.Fatalf("a crash: %.400s", msg)
			}
			assertNoTerminalBytes(t, "stdout", stdout)
			assertNoTerminalBytes(t, "stderr", stderr)
		})
	}
}
