// Package builder builds the runtime boundary's real artefacts with the real
// toolchain: nrtabi's libnrt.so.1 (go build -buildmode=c-shared, linked with
// the spec's version script), the libnccom test doubles (the C compiler of
// internal/cc over the generated stub source), a net-plugin double, and the
// small C programs the end-to-end tests and the benchmark run. `make
// libnrt`, `make nccom-stubs`, the demo, the tests and the benchmark all
// build through here; every build takes a context that ends it.
//
// See docs/runtime-boundary.md#building-and-running.
package builder

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/proc"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// Module is the module path the tree's go.mod declares.
const Module = gen.Module

// Tree is a checkout of the module and one release of its spec.
type Tree struct {
	Root string
	Spec *spec.Spec
}

// Open finds the module root above the working directory and loads the
// embedded spec of release ("" for the default release). A release whose
// generated tree is missing is refused with the command that generates it
// (NotGenerated), before anything is built: no silent fallback
// (docs/generator.md#building-for-a-release).
func Open(release string) (*Tree, error) {
	if release == "" {
		release = spec.Default
	}
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	root, err := FindRoot(dir)
	if err != nil {
		return nil, err
	}
	if err := CheckGenerated(root, release); err != nil {
		return nil, err
	}
	s, err := loadRelease(root, release)
	if err != nil {
		return nil, err
	}
	return &Tree{Root: root, Spec: s}, nil
}

// BuildTag is the tag every go build of the tree's release passes
// (gen.ReleaseTag): without it generated/abi does not compile.
func (t *Tree) BuildTag() string { return gen.ReleaseTag(t.Spec.Release.Name) }

// DefaultBuildTag is the build tag of the default release.
var DefaultBuildTag = gen.ReleaseTag(spec.Default)

// loadRelease reads release's spec: the embedded copy when this binary has
// one, otherwise the checkout's spec/<release> the generated tree was made
// from (a release added after this binary was built; gen reads the TOML too).
func loadRelease(root, release string) (*spec.Spec, error) {
	for _, r := range spec.Releases() {
		if r == release {
			return compiled.Load(release)
		}
	}
	s, err := spec.LoadDir(filepath.Join(root, "spec", release))
	if err != nil {
		return nil, fmt.Errorf("release %s: %w", release, err)
	}
	if s.Release.Name != release {
		return nil, fmt.Errorf("%s names release %q, not %s", filepath.Join(root, "spec", release), s.Release.Name, release)
	}
	return s, nil
}

// NotGenerated is a release the module checkout holds no generated tree for.
type NotGenerated struct {
	Release string
	Missing string // the first missing file, relative to the root
}

func (e *NotGenerated) Error() string {
	return fmt.Sprintf("release %s is not generated (no %s): run %s", e.Release, e.Missing, gen.GenerateCommand(e.Release))
}

// CheckGenerated is nil when the checkout at root holds release's generated
// C header and selector file (gen.GeneratedFiles), a *NotGenerated
// otherwise. Only regular files count.
func CheckGenerated(root, release string) error {
	if p := spec.FileNameProblem(release); p != "" {
		return fmt.Errorf("release name %q: %s", release, p)
	}
	for _, f := range gen.GeneratedFiles(release) {
		fi, err := os.Stat(filepath.Join(root, f))
		if err != nil || !fi.Mode().IsRegular() {
			return &NotGenerated{Release: release, Missing: f}
		}
	}
	return nil
}

// FindRoot walks up from dir to the directory whose go.mod declares Module.
func FindRoot(dir string) (string, error) { return gen.FindRoot(dir) }

// CDir holds the release's generated C: nrtabi.h, nrt_slots.{h,c},
// nccom_stub.c and the version scripts.
func (t *Tree) CDir() string {
	return filepath.Join(t.Root, "generated", t.Spec.Release.Name, "c")
}

// LibnrtDir is the runtime's c-shared main package.
func (t *Tree) LibnrtDir() string { return filepath.Join(t.Root, "runtime", "libnrt") }

// Error is a failed tool run with everything it printed.
type Error struct {
	Cmd    string
	Output string
	Err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %v\n%s", e.Cmd, e.Err, strings.TrimRight(e.Output, "\n"))
}

func (e *Error) Unwrap() error { return e.Err }

// run runs a tool in dir, killed with its process group when ctx ends.
func run(ctx context.Context, dir string, env []string, name string, args ...string) error {
	cmd := proc.Command(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return &Error{Cmd: name + " " + strings.Join(args, " "), Output: out.String(), Err: proc.Err(ctx, err)}
	}
	return nil
}

// writeFile writes through a temporary file so a failure never leaves a
// half-written file in place of a good one.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".nrtabi-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}

// reverseNode is the version node the reverse callbacks live under.
func (t *Tree) reverseNode() string { return t.Spec.Reverse[0].Version }
