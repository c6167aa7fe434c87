package main

import (
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/nrtabi/nrtabi/runtime/builder"
)

// `make libnrt` and `make nccom-stubs`.
func init() {
	register(&command{name: "build libnrt", summary: "build the runtime's libnrt.so.1 (go build -buildmode=c-shared, versioned exports)", run: buildLibnrt})
	register(&command{name: "build nccom-stubs", summary: "build the libnccom test doubles against a built libnrt.so.1", run: buildStubs})
}

func buildLibnrt(args []string, out, errw io.Writer) int {
	fs := newFlags("build libnrt", errw)
	dir := fs.String("out", "build", "directory to write libnrt.so.1 and its version script to")
	variant := fs.String("variant", string(builder.Versioned), "link variant (the others exist for the dynamic-linker matrix)")
	release := fs.String("release", "", "release (default: the default release)")
	if rc := parse(fs, args); rc >= 0 {
		return rc
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(errw, "nrtabi build libnrt: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	t, err := builder.Open(*release)
	if err != nil {
		fmt.Fprintf(errw, "nrtabi build libnrt: %v\n", err)
		return exitError
	}
	p, err := t.BuildLibnrt(*dir, builder.LinkVariant(*variant))
	if err != nil {
		fmt.Fprintf(errw, "nrtabi build libnrt: %v\n", err)
		return exitError
	}
	fmt.Fprintf(out, "%s\n", p)
	if s, err := describeLibnrt(p); err == nil {
		fmt.Fprintf(out, "  %s\n", s)
	}
	return exitOK
}

// describeLibnrt reads back SONAME and the exports per version.
func describeLibnrt(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	so, _ := f.DynString(elf.DT_SONAME)
	syms, err := f.DynamicSymbols()
	if err != nil {
		return "", err
	}
	byVersion := map[string]int{}
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF && elf.ST_TYPE(s.Info) == elf.STT_FUNC && elf.ST_BIND(s.Info) != elf.STB_LOCAL {
			v := "(unversioned)"
			if s.Version != "" {
				v = "@@" + s.Version
			}
			byVersion[v]++
		}
	}
	var parts []string
	for v, n := range byVersion {
		parts = append(parts, fmt.Sprintf("%d %s", n, v))
	}
	needed, _ := f.ImportedLibraries()
	return fmt.Sprintf("SONAME %s; exports %s; DT_NEEDED %s", strings.Join(so, ","), strings.Join(parts, ", "), strings.Join(needed, " ")), nil
}

func buildStubs(args []string, out, errw io.Writer) int {
	fs := newFlags("build nccom-stubs", errw)
	libnrt := fs.String("libnrt", "build", "directory holding the libnrt.so.1 the doubles link against")
	dir := fs.String("out", "build/nccom-stubs", "directory to write one subdirectory per double to")
	release := fs.String("release", "", "release (default: the default release)")
	if rc := parse(fs, args); rc >= 0 {
		return rc
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(errw, "nrtabi build nccom-stubs: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	lib := filepath.Join(*libnrt, builder.LibnrtFile)
	if _, err := os.Stat(lib); err != nil {
		fmt.Fprintf(errw, "nrtabi build nccom-stubs: %s: %v (build it first: make libnrt, or --libnrt DIR)\n", lib, err)
		return exitError
	}
	t, err := builder.Open(*release)
	if err != nil {
		fmt.Fprintf(errw, "nrtabi build nccom-stubs: %v\n", err)
		return exitError
	}
	for _, st := range t.Stubs() {
		p, err := t.BuildStub(*libnrt, *dir, st)
		if err != nil {
			fmt.Fprintf(errw, "nrtabi build nccom-stubs: %s: %v\n", st.Name, err)
			return exitError
		}
		fmt.Fprintf(out, "%-60s %s\n", p, st.About)
	}
	p, err := t.BuildNetPlugin(*dir)
	if err != nil {
		fmt.Fprintf(errw, "nrtabi build nccom-stubs: net plugin: %v\n", err)
		return exitError
	}
	fmt.Fprintf(out, "%-60s %s\n", p, "net-plugin double (the soft load's target)")
	return exitOK
}
