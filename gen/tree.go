package gen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// Module is the module path the tree's go.mod declares.
const Module = "github.com/nrtabi/nrtabi"

// CgoPackages are the packages, relative to the module root, that compile a
// release's generated C: each gets one zrelease_<release>.go per release
// (CgoRelease). This is the one list; `nrtabi gen --all` and so
// `make generate` and `go generate ./gen` use it.
var CgoPackages = []string{"runtime/collectives", "runtime/nrt"}

// Tree outputs of `nrtabi gen --all`, relative to the module root.
const (
	GeneratedDir = "generated" // one directory per release and the selector
	CompiledDir  = "spec"      // CompiledSpecName, the releases as Go literals
)

// FindRoot walks up from dir to the directory whose go.mod declares Module.
func FindRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("module "+Module+"\n")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod of module %s above %s: run from inside the nrtabi tree", Module, dir)
		}
	}
}
