package gen

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"

	"github.com/nrtabi/nrtabi/spec"
)

// This file is the one description of the generated tree: which directory
// under the module root receives which files. `nrtabi gen --all` writes or
// checks what Tree returns, and `make generate`, `make check-generated` and
// `go generate ./...` run that command and nothing else.

// Module is the module path the tree's go.mod declares.
const Module = "github.com/nrtabi/nrtabi"

// Output is one directory of the generated tree and the files generated
// into it (paths relative to Dir).
type Output struct {
	Dir   string
	Files []File
}

// The directories of the tree, relative to the module root.
const (
	generatedDir = "generated"     // one directory per release and the selector
	compiledDir  = "spec/compiled" // CompiledSpecName, the releases as Go literals
	modelDir     = "model"         // PromelaHeaderName of every release
)

// cgoPackages are the packages, relative to the module root, that compile a
// release's generated C: each gets one zrelease_<release>.go per release
// (CgoRelease).
var cgoPackages = []string{"runtime/collectives", "runtime/nrt"}

// libnrtPackage is the c-shared main package of libnrt.so.1: it gets one
// zrelease_<release>.go per release naming the release it is built for
// (LibnrtRelease).
const libnrtPackage = "runtime/libnrt"

// Releases renders every release of specs into dir/<release>/ and the
// release selector into dir (def is the release the selector's guard tells
// a build without a release tag to name; no build gets it silently): the
// part of the tree `nrtabi gen --all --out DIR` writes.
func Releases(dir string, specs []*spec.Spec, def string) ([]Output, error) {
	// A field one release lacks has presence accessors in every release,
	// so hand-written code compiles for each (docs/generator.md#absent-fields).
	p, err := presenceOf(specs)
	if err != nil {
		return nil, err
	}
	var out []Output
	for _, s := range specs {
		files, err := generate(s, p)
		if err != nil {
			return nil, err
		}
		out = append(out, Output{filepath.Join(dir, s.Release.Name), files})
	}
	sel, err := Selector(specs, def)
	if err != nil {
		return nil, err
	}
	return append(out, Output{dir, sel}), nil
}

// Tree renders every generated file of the module rooted at root from specs
// (the embedded releases, read from their TOML; def the default release):
// generated/, spec/compiled/zcompiled.go, the zrelease files of the cgo
// packages and the model headers model/zspec_<release>.pml. Nothing is
// written.
func Tree(root string, specs []*spec.Spec, def string) ([]Output, error) {
	// Hand-written code must compile against every release the tree holds
	// (docs/generator.md#stable-fields): refuse here, in one line per field,
	// what would otherwise be a compile error inside runtime/.
	uses, err := scanHandUses(root)
	if err != nil {
		return nil, err
	}
	if err := checkHandUses(specs, uses); err != nil {
		return nil, err
	}
	out, err := Releases(filepath.Join(root, generatedDir), specs, def)
	if err != nil {
		return nil, err
	}
	compiled, err := CompiledSpec(specs)
	if err != nil {
		return nil, err
	}
	out = append(out, Output{filepath.Join(root, filepath.FromSlash(compiledDir)), compiled})
	for _, pkg := range cgoPackages {
		dir := filepath.Join(root, filepath.FromSlash(pkg))
		name, err := packageName(dir)
		if err != nil {
			return nil, fmt.Errorf("cgo package %s: %w", pkg, err)
		}
		out = append(out, Output{dir, CgoRelease(specs, def, pkg, name)})
	}
	dir := filepath.Join(root, filepath.FromSlash(libnrtPackage))
	name, err := packageName(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", libnrtPackage, err)
	}
	out = append(out, Output{dir, LibnrtRelease(specs, name)})
	headers, err := promelaHeaders(specs)
	if err != nil {
		return nil, err
	}
	return append(out, Output{filepath.Join(root, modelDir), headers}), nil
}

// TreeSummary names what Tree writes, for a command's help.
func TreeSummary() string {
	return generatedDir + "/, " + compiledDir + "/" + CompiledSpecName + ", " + modelDir + "/" + PromelaHeaderName("*") +
		" and the zrelease files of " + strings.Join(append(append([]string(nil), cgoPackages...), libnrtPackage), ", ")
}

// packageName reads the package clause of the hand-written Go files in dir.
func packageName(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") || strings.HasPrefix(e.Name(), "zrelease_") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.PackageClauseOnly)
		if err != nil {
			return "", err
		}
		return f.Name.Name, nil
	}
	return "", fmt.Errorf("no Go files in %s", dir)
}
