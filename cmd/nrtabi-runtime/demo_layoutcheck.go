package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/layoutcheck"
	"github.com/nrtabi/nrtabi/layoutcheck/elfread"
	"github.com/nrtabi/nrtabi/layoutcheck/release"
	"github.com/nrtabi/nrtabi/spec"
)

// The layoutcheck steps: read a struct back from real DWARF, and round-trip
// a spec fragment through extract and check.
func init() {
	addDemoStep(demoStep{order: 70, title: "layoutcheck: nrtabi show nec_version_info_t on a gcc -g object", run: demoShow})
	addDemoStep(demoStep{order: 71, title: "layoutcheck: extract -> check round trip, and a libnrt's link contract", run: demoRoundTrip})
}

// demoObjects compiles every struct of the generated header into a shared
// object with DWARF, and links a libnrt.so.1 from the generated version script.
func demoObjects(d *demoEnv) (types, libnrt string, err error) {
	if v, ok := d.state["layoutcheck.types"].(string); ok {
		return v, d.state["layoutcheck.libnrt"].(string), nil
	}
	if err := cc.Available(); err != nil {
		return "", "", err
	}
	s := d.state["spec"].(*spec.Spec)
	src := filepath.Join(d.state["gen"].(string), "c")
	dir := filepath.Join(d.work, "layoutcheck")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	tu := fmt.Sprintf("#define _GNU_SOURCE\n#include \"%s\"\n", filepath.Join(src, gen.HeaderName))
	var rev strings.Builder
	for _, r := range s.Reverse {
		fmt.Fprintf(&rev, "void %s(void) {}\n", r.Name)
	}
	for name, text := range map[string]string{"types.c": tu, "reverse.c": rev.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return "", "", err
		}
	}
	if err := cc.Shared(dir, "libtypes.so", "libtypes.so", "", []string{"types.c"}, "-fno-eliminate-unused-debug-types"); err != nil {
		return "", "", err
	}
	if err := cc.Shared(dir, "libnrt.so.1", s.Release.LibNRT.SONAME, filepath.Join(src, "libnrt.map"), []string{"reverse.c", "types.c"}, "-fno-eliminate-unused-debug-types"); err != nil {
		return "", "", err
	}
	types, libnrt = filepath.Join(dir, "libtypes.so"), filepath.Join(dir, "libnrt.so.1")
	d.state["layoutcheck.types"], d.state["layoutcheck.libnrt"] = types, libnrt
	return types, libnrt, nil
}

func demoShow(d *demoEnv) error {
	types, _, err := demoObjects(d)
	if err != nil {
		return err
	}
	s := d.state["spec"].(*spec.Spec)
	var out bytes.Buffer
	res, err := layoutcheck.Show(types, "nec_version_info_t", layoutcheck.ShowOptions{Spec: s, DebugDirs: elfread.DefaultDebugDirs}, &out)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
		d.printf("%s", strings.ReplaceAll(line, "\t", "    "))
	}
	for _, m := range res.Layout.Members {
		if m.Name == "compatibility_version" && m.Offset != 48 || res.Layout.Size != 56 || len(res.Findings) > 0 {
			return fmt.Errorf("nec_version_info_t does not read back as the spec's 56-byte layout")
		}
	}
	return nil
}

func demoRoundTrip(d *demoEnv) error {
	types, libnrt, err := demoObjects(d)
	if err != nil {
		return err
	}
	s := d.state["spec"].(*spec.Spec)
	var names []string
	for _, st := range s.Structs {
		names = append(names, st.Name)
	}
	var frag bytes.Buffer
	if err := release.Extract(types, names, false, s, nil, &frag); err != nil {
		return err
	}
	dir := filepath.Join(d.work, "layoutcheck", "fragment")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "structs.toml"), frag.Bytes(), 0o644); err != nil {
		return err
	}
	fs, err := spec.LoadDir(dir)
	if err != nil {
		return err
	}
	d.printf("nrtabi extract libtypes.so -> %s: %d structs, %d lines, loads as a fragment", filepath.Join(dir, "structs.toml"), len(fs.Structs), bytes.Count(frag.Bytes(), []byte("\n")))
	r, err := layoutcheck.Check([]string{types}, layoutcheck.Options{Spec: s, Structs: fs, StructsSrc: dir, Role: "auto", DebugDirs: elfread.DefaultDebugDirs})
	if err != nil {
		return err
	}
	d.printf("nrtabi check --spec fragment libtypes.so: %d structs checked; %s (exit %d)", len(r.Files[0].Structs), r.Verdict, r.Exit)
	if r.Exit != 0 {
		return fmt.Errorf("round trip not clean")
	}
	r, err = layoutcheck.Check([]string{libnrt}, layoutcheck.Options{Spec: s, StructsSrc: "spec/" + s.Release.Name, Role: "auto", DebugDirs: elfread.DefaultDebugDirs})
	if err != nil {
		return err
	}
	for _, c := range r.Files[0].Contract {
		mark := "ok  "
		if !c.OK {
			mark = "FAIL"
		}
		d.printf("%s %s", mark, c.Name)
	}
	d.printf("nrtabi check libnrt.so.1 (role %s from its SONAME): %s (exit %d)", r.Files[0].Role, r.Verdict, r.Exit)
	if r.Exit != 0 {
		return fmt.Errorf("the libnrt built from the generated version script is not clean")
	}
	return nil
}
