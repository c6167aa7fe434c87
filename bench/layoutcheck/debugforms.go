package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/spec"
)

// The debug info forms pahole 1.24 cannot follow: a dwz -m processed
// library (its types in a supplementary file) and a -gsplit-dwarf one (its
// types in a .dwo). The rows are kept with pahole's own answer in them.

// typesSource writes a C file holding every struct of the spec header.
func typesSource(dir, name, fn string) (string, error) {
	header, err := filepath.Abs(filepath.Join("generated", spec.Default, "c", gen.HeaderName))
	if err != nil {
		return "", err
	}
	src := filepath.Join(dir, name)
	text := "#define _GNU_SOURCE\n#include \"" + header + "\"\nint " + fn + "(void) { return 1; }\n"
	return src, os.WriteFile(src, []byte(text), 0o644)
}

// dwzInput builds liba.so and libb.so from the spec header and moves their
// shared types into common.debug with dwz -m (once).
func dwzInput(cache string) (lib, common string, err error) {
	dir := filepath.Join(cache, "dwz")
	lib, common = filepath.Join(dir, "liba.so"), filepath.Join(dir, "common.debug")
	if _, err := os.Stat(common); err == nil {
		return lib, common, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	for _, n := range []string{"a", "b"} {
		src, err := typesSource(dir, n+".c", n+"_fn")
		if err != nil {
			return "", "", err
		}
		if err := cc.Run(dir, "-shared", "-fPIC", "-g", "-fno-eliminate-unused-debug-types", "-o", "lib"+n+".so", src); err != nil {
			return "", "", err
		}
	}
	cmd := exec.Command("dwz", "-m", "common.debug", "-M", common, "liba.so", "libb.so")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("dwz -m: %w\n%s", err, b)
	}
	return lib, common, nil
}

// splitInput builds liba.so with -gsplit-dwarf (DWARF 5): the skeleton in
// the library, the types in liba.dwo next to it (once).
func splitInput(cache string) (lib, dwo string, err error) {
	dir := filepath.Join(cache, "split")
	lib, dwo = filepath.Join(dir, "liba.so"), filepath.Join(dir, "liba.dwo")
	if _, err := os.Stat(lib); err == nil {
		return lib, dwo, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	src, err := typesSource(dir, "liba.c", "a_fn")
	if err != nil {
		return "", "", err
	}
	if err := cc.Run(dir, "-c", "-fPIC", "-g", "-gsplit-dwarf", "-gdwarf-5", "-fno-eliminate-unused-debug-types", "-o", "liba.o", src); err != nil {
		return "", "", err
	}
	return lib, dwo, cc.Run(dir, "-shared", "-o", "liba.so", "liba.o")
}

// paholeAnswer is what pahole -C prints for a struct of the file (untimed):
// its "not found" line when it cannot read the file's types.
func paholeAnswer(file, tag string) string {
	cmd := exec.Command("pahole", "-C", tag, file)
	out, _ := cmd.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}
