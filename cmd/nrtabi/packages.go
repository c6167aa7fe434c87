package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/readers/inputs"
	"github.com/nrtabi/nrtabi/readers/pkgfile"
	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/spec"
)

// packageArgs expands package arguments (.deb, .rpm, .tar.*) into their
// ELF members, read in memory, and collects the debug files of every
// package of the run, so that a -dbgsym or -debuginfo package given beside
// its main package answers the debug lookup of all inputs
// (docs/packages.md#debug-packages).
type packageArgs struct {
	mem  elfread.MemDebug
	pkgs []*pkgfile.Package
}

// expand is an inputs.Expander.
func (p *packageArgs) expand(path string, head []byte) ([]inputs.Input, bool, error) {
	if pkgfile.Detect(head) == "" {
		return nil, false, nil
	}
	pkg, err := pkgfile.Open(path)
	if errors.Is(err, pkgfile.ErrNotPackage) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	p.pkgs = append(p.pkgs, pkg)
	pkg.AddDebug(&p.mem)
	var out []inputs.Input
	for _, m := range pkg.Inputs() {
		out = append(out, inputs.Input{Name: pkg.Display(m), Mem: pkgfile.NewReader(m)})
	}
	if len(pkg.Members) == 0 {
		// An empty static library (glibc's libanl.a stub), a package of
		// documentation: listed, not an error that ends a walk.
		out = append(out, inputs.Input{Name: path, Skip: "an archive holding no ELF file"})
	}
	return out, true, nil
}

// debugOnly makes the debug files of the run's debug-only packages its
// inputs when nothing else is read: a -dbgsym .deb given alone is read
// (docs/packages.md#debug-packages), beside its main package it is not.
func (p *packageArgs) debugOnly(ins []inputs.Input) []inputs.Input {
	for _, in := range ins {
		if in.Skip == "" {
			return ins
		}
	}
	for _, pkg := range p.pkgs {
		if pkg.DebugOnly() {
			for _, m := range pkg.Members {
				ins = append(ins, inputs.Input{Name: pkg.Display(m), Mem: pkgfile.NewReader(m)})
			}
		}
	}
	return ins
}

// pair gives every input the packages' debug files, once all arguments are
// expanded: a debug package may come before or after its main package, and
// a plain file may have its debug file in a package too.
func (p *packageArgs) pair(ins []inputs.Input) {
	if p.mem.Len() == 0 {
		return
	}
	for i := range ins {
		prev := ins[i].Debug
		ins[i].Debug = func(lk *elfread.Lookup) {
			if prev != nil {
				prev(lk)
			}
			lk.Mem = &p.mem
		}
	}
}

// expandPackages expands args with packages taken apart in memory.
func expandPackages(args []string, opt inputs.Options) ([]inputs.Input, error) {
	var pa packageArgs
	opt.Expand = pa.expand
	ins, err := inputs.Expand(args, opt)
	if err != nil {
		return nil, err
	}
	ins = pa.debugOnly(ins)
	pa.pair(ins)
	return ins, nil
}

// diffSide reads a diff side's binaries: each package taken apart in memory
// (its libraries, paired with the debug packages of the same side), plain
// files as they are; then release new's reading of them on top of base.
func diffSide(ctx context.Context, base *spec.Spec, name string, files, debugDirs []string) (*release.Release, error) {
	var pa packageArgs
	ins, err := inputs.Expand(files, inputs.Options{Expand: pa.expand})
	if err != nil {
		return nil, err
	}
	byName := map[string]inputs.Input{}
	var names []string
	for _, in := range ins {
		if in.Skip != "" {
			continue
		}
		byName[in.Name] = in
		names = append(names, in.Name)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: no ELF file outside %s in it; name the package holding the libraries, beside its debug package", strings.Join(files, ","), pkgfile.DebugDir)
	}
	opt := release.ObserveOptions{DebugDirs: debugDirs, Fetch: cli.Debuginfod(), Open: func(n string) (*elfread.File, error) {
		if in, ok := byName[n]; ok {
			return in.Open()
		}
		return elfread.Open(n)
	}}
	if pa.mem.Len() > 0 {
		opt.Mem = &pa.mem
	}
	obs, err := release.Observe(ctx, names, base, opt)
	if err != nil {
		return nil, err
	}
	return release.NewWith(base, name, obs, "", release.Identity{})
}

// isPackage reports whether the file at path starts like a package or
// archive: a single FILE argument that is one is many inputs, its members.
func isPackage(path string) bool { return pkgfile.IsPackageFile(path) }

// extractArg resolves extract's FILE when it names packages: PKG or
// PKG,DEBUGPKG... (as a diff side), the one library of the packages, or the
// member named PKG!/path/in/package when they hold several. It returns the
// member's name and completes opt to read it in memory; a FILE that is no
// package is returned as it is.
func extractArg(arg string, opt *release.ExtractOptions) (string, error) {
	parts := strings.Split(arg, ",")
	want := ""
	if pkg, member, ok := strings.Cut(parts[0], "!"); ok && !exists(parts[0]) && pkgfile.IsPackageFile(pkg) {
		parts[0], want = pkg, member
	}
	if !pkgfile.IsPackageFile(parts[0]) {
		return arg, nil
	}
	var pa packageArgs
	ins, err := inputs.Expand(parts, inputs.Options{Expand: pa.expand})
	if err != nil {
		return "", err
	}
	var libs []inputs.Input
	var names []string
	for _, in := range ins {
		if in.Skip != "" || !strings.HasPrefix(in.Name, parts[0]+"!") {
			continue
		}
		if want == "" || in.Name == parts[0]+"!"+want {
			libs = append(libs, in)
		}
		names = append(names, in.Name)
	}
	switch {
	case len(libs) == 1:
	case want != "":
		return "", elfread.InputErrorf(parts[0], "no ELF member %s outside %s (its ELF members: %s)", want, pkgfile.DebugDir, strings.Join(names, ", "))
	case len(libs) == 0:
		return "", elfread.InputErrorf(parts[0], "no ELF file outside %s in it; name the package holding the library, beside its debug package", pkgfile.DebugDir)
	default:
		return "", elfread.InputErrorf(parts[0], "holds %d ELF files (%s); extract reads one: name it as %s", len(libs), strings.Join(names, ", "), names[0])
	}
	in := libs[0]
	opt.Open = func(string) (*elfread.File, error) { return in.Open() }
	if pa.mem.Len() > 0 {
		opt.Mem = &pa.mem
	}
	return in.Name, nil
}

// exists reports whether a file of that name is there (a name with "!" in
// it is a file first, a package member second).
func exists(name string) bool {
	_, err := os.Lstat(name)
	return err == nil
}
