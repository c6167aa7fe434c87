package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// The foundation steps: validate the embedded spec, regenerate, compile.
func init() {
	addDemoStep(demoStep{order: 10, title: "validate the embedded spec", run: demoValidate})
	addDemoStep(demoStep{order: 20, title: "regenerate the bindings into a scratch directory", run: demoGenerate})
	addDemoStep(demoStep{order: 30, title: "compile the generated C (gcc -std=c11 -Wall -Wextra -Werror)", run: demoCompileC})
	addDemoStep(demoStep{order: 40, title: "compile and test the generated Go", run: demoCompileGo})
	addDemoStep(demoStep{order: 50, title: "layouts the build now holds in place", run: demoStructs})
}

func demoValidate(d *demoEnv) error {
	s, err := compiled.Load(d.release)
	if err != nil {
		return err
	}
	d.state["spec"] = s
	for _, line := range strings.Split(strings.TrimRight(cli.SpecSummary(s), "\n"), "\n") {
		d.printf("%s", line)
	}
	return nil
}

func demoGenerate(d *demoEnv) error {
	s := d.state["spec"].(*spec.Spec)
	files, err := gen.Generate(s)
	if err != nil {
		return err
	}
	dir := filepath.Join(d.work, "generated")
	if err := gen.Write(dir, files); err != nil {
		return err
	}
	d.state["gen"] = dir
	lines, cLines, goLines := 0, 0, 0
	for _, f := range files {
		n := bytes.Count(f.Data, []byte("\n"))
		lines += n
		if strings.HasSuffix(f.Path, ".go") {
			goLines += n
		} else {
			cLines += n
		}
	}
	d.printf("%d files, %d lines (%d C and linker script, %d Go) in %s", len(files), lines, cLines, goLines, dir)
	return nil
}

func demoCompileC(d *demoEnv) error {
	if err := cc.Available(); err != nil {
		return err
	}
	dir := filepath.Join(d.state["gen"].(string), "c")
	tu := filepath.Join(dir, "header_check.c")
	src := fmt.Sprintf("#define _GNU_SOURCE\n#include \"%s\"\n#include \"%s\"\n", gen.HeaderName, gen.SlotsHeader)
	if err := os.WriteFile(tu, []byte(src), 0o644); err != nil {
		return err
	}
	for _, f := range []string{"header_check.c", gen.SlotsSource, gen.StubSource} {
		obj := strings.TrimSuffix(f, ".c") + ".o"
		if err := cc.Object(dir, f, obj, cc.Strict...); err != nil {
			return err
		}
		d.printf("%-16s -> %s", f, obj)
	}
	s := d.state["spec"].(*spec.Spec)
	d.printf("%d _Static_asserts hold (every struct size and every known offset)", gen.CountAsserts(s))
	return nil
}

func demoCompileGo(d *demoEnv) error {
	dir := filepath.Join(d.state["gen"].(string), gen.GoPackage)
	mod := "module nrtabidemo\n\ngo 1.22\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{{"vet", "./..."}, {"test", "-count=1", "./..."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	s := d.state["spec"].(*spec.Spec)
	d.printf("go vet and go test pass; %d compile-time layout assertions hold", gen.CountGoAsserts(s))
	return nil
}

func demoStructs(d *demoEnv) error {
	s := d.state["spec"].(*spec.Spec)
	for _, name := range []string{"enc_glb_comm", "enc_nccl_comm_node", "nec_version_info_t", "nrt_version_t", "enc_replica_group_info", "ncclComm", "extInfo"} {
		st := s.StructByName(name)
		if st == nil {
			continue
		}
		var known []string
		for _, f := range st.Fields {
			if len(known) == 4 {
				known = append(known, "...")
				break
			}
			known = append(known, fmt.Sprintf("%s@%d", f.Name, f.Offset))
		}
		d.printf("%-24s %7d B  %2d fields, %d opaque  %s", st.Name, st.Size, len(st.Fields), len(st.Opaque), strings.Join(known, " "))
	}
	return nil
}
