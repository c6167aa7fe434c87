package builder

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/spec"
)

// LibnrtFile is the file name (and SONAME) of the runtime library.
const LibnrtFile = "libnrt.so.1"

// LibnrtExports are the runtime's own entry points (runtime/libnrt's
// //export functions, declared in nrtabi_runtime.h). They are versioned under
// the reverse callbacks' node, never left unversioned.
var LibnrtExports = []string{"nrtabi_init", "nrtabi_ccom_state", "nrtabi_ccom_call", "nrtabi_bootstrap_world", "nrtabi_proxy_run", "nrtabi_trampolines", gen.LibnrtReleaseFunc}

// LibnrtData are the runtime's exported data symbols, versioned like
// LibnrtExports: the name of the release the library is built for
// (docs/runtime-boundary.md#release-identity). They sit in the entry points'
// node, which the spec declares, so `nrtabi check` of the library stays
// CLEAN ("version definitions equal the spec's").
var LibnrtData = []string{gen.LibnrtReleaseSymbol}

// LinkVariant is how a libnrt.so.1 is versioned. Only Versioned is the
// runtime; the others exist to measure how the dynamic linker treats a
// libnccom's versioned imports against them (spec [[link_behaviour]]).
type LinkVariant string

// The variants, named after their spec rows.
const (
	Versioned    LinkVariant = "versioned"     // callbacks @@NRT_2.0.0: the runtime
	BaseFallback LinkVariant = "base-fallback" // the node exists, callbacks at the base version
	NoNode       LinkVariant = "no-node"       // callbacks under another node, none named NRT_2.0.0
	NotExported  LinkVariant = "not-exported"  // one callback left local
	Unversioned  LinkVariant = "unversioned"   // no version script at all
)

// LinkVariants lists them in that order.
var LinkVariants = []LinkVariant{Versioned, BaseFallback, NoNode, NotExported, Unversioned}

// OtherNode is the node NoNode puts the callbacks under.
const OtherNode = "NRTABI_OTHER_1.0"

// HiddenCallback is the callback NotExported leaves local: the first nec_*
// row of the spec.
func (t *Tree) HiddenCallback() string {
	for _, r := range t.Spec.Reverse {
		if strings.HasPrefix(r.Name, "nec_") {
			return r.Name
		}
	}
	return t.Spec.Reverse[0].Name
}

// LibnrtScript renders the version script of a variant; nil for Unversioned.
func (t *Tree) LibnrtScript(v LinkVariant) ([]byte, error) {
	node := t.reverseNode()
	var names []string
	for _, r := range t.Spec.Reverse {
		names = append(names, r.Name)
	}
	block := func(name string, syms []string, local bool) string {
		var b strings.Builder
		fmt.Fprintf(&b, "%s {\n", name)
		if len(syms) > 0 {
			b.WriteString("  global:\n")
			for _, s := range syms {
				fmt.Fprintf(&b, "    %s;\n", s)
			}
		}
		if local {
			b.WriteString("  local:\n    *;\n")
		}
		b.WriteString("};\n")
		return b.String()
	}
	own := append(append([]string(nil), LibnrtExports...), LibnrtData...)
	head := fmt.Sprintf("/* libnrt.so.1 link variant %q, for the dynamic-linker matrix; not the runtime. */\n", v)
	switch v {
	case Versioned:
		return gen.LibnrtVersionScript(t.Spec, map[string][]string{node: own})
	case BaseFallback:
		return []byte(head + block(node, own, false)), nil
	case NoNode:
		return []byte(head + block(OtherNode, append(names, own...), true)), nil
	case NotExported:
		hidden := t.HiddenCallback()
		var keep []string
		for _, n := range names {
			if n != hidden {
				keep = append(keep, n)
			}
		}
		return []byte(head + block(node, append(keep, own...), true)), nil
	case Unversioned:
		return nil, nil
	}
	return nil, fmt.Errorf("unknown link variant %q (one of %v)", v, LinkVariants)
}

// BuildLibnrt builds runtime/libnrt into dir/libnrt.so.1 with go build
// -buildmode=c-shared, the variant's version script (kept next to it as
// libnrt.map) and SONAME libnrt.so.1.
func (t *Tree) BuildLibnrt(ctx context.Context, dir string, v LinkVariant) (string, error) {
	script, err := t.LibnrtScript(v)
	if err != nil {
		return "", err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	soname := t.Spec.Release.LibNRT.SONAME
	ext := "-Wl,-soname," + soname
	if script != nil {
		mp := filepath.Join(dir, "libnrt.map")
		if err := writeFile(mp, script); err != nil {
			return "", err
		}
		ext += " -Wl,--version-script=" + mp
	}
	out := filepath.Join(dir, LibnrtFile)
	tmp := filepath.Join(dir, ".build-"+LibnrtFile)
	// Every release, the default one included, is built under its own tag:
	// without it generated/abi refuses to compile (docs/generator.md#building-for-a-release).
	args := []string{"build", "-buildmode=c-shared", "-trimpath", "-tags", t.BuildTag()}
	args = append(args, "-ldflags=-extldflags '"+ext+"'", "-o", tmp, "./runtime/libnrt")
	if err := run(ctx, t.Root, []string{"CGO_ENABLED=1"}, "go", args...); err != nil {
		return "", err
	}
	// go build also writes a header named after the output; the runtime's
	// header is nrtabi_runtime.h.
	os.Remove(strings.TrimSuffix(tmp, filepath.Ext(tmp)) + ".h")
	if err := os.Rename(tmp, out); err != nil {
		return "", err
	}
	return out, nil
}

// RuntimeHeaderDir holds nrtabi_runtime.h, the header of LibnrtExports.
func (t *Tree) RuntimeHeaderDir() string { return t.LibnrtDir() }

// maxReleaseName bounds the release name read from a library: a release
// name is a short identifier, and the bytes come from a file on disk.
const maxReleaseName = 256

// LibnrtRelease reads the name of the release a libnrt.so.1 was built for
// from its exported data symbol (gen.LibnrtReleaseSymbol), without loading
// it. A library without the symbol (built before it existed, or not by
// nrtabi) is an error that says so; only regular files are opened.
func LibnrtRelease(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s: not a regular file", path)
	}
	r, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer r.Close()
	return releaseFrom(path, r)
}

// releaseFrom is LibnrtRelease on an open file (path only names it).
func releaseFrom(path string, r io.ReaderAt) (string, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	syms, err := f.DynamicSymbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	for _, s := range syms {
		if s.Name != gen.LibnrtReleaseSymbol || s.Section == elf.SHN_UNDEF || elf.ST_TYPE(s.Info) != elf.STT_OBJECT {
			continue
		}
		if s.Size == 0 || s.Size > maxReleaseName {
			return "", fmt.Errorf("%s: %s is %d bytes; a release name is 1 to %d", path, s.Name, s.Size, maxReleaseName-1)
		}
		for _, sec := range f.Sections {
			if sec.Type == elf.SHT_NOBITS || s.Value < sec.Addr || s.Value+s.Size > sec.Addr+sec.Size {
				continue
			}
			b := make([]byte, s.Size)
			if _, err := sec.ReadAt(b, int64(s.Value-sec.Addr)); err != nil {
				return "", fmt.Errorf("%s: reading %s: %w", path, s.Name, err)
			}
			n := bytes.IndexByte(b, 0)
			if n < 0 {
				return "", fmt.Errorf("%s: %s is not NUL-terminated", path, s.Name)
			}
			name := string(b[:n])
			if p := spec.FileNameProblem(name); p != "" {
				return "", fmt.Errorf("%s: %s is %q: %s", path, s.Name, name, p)
			}
			return name, nil
		}
		return "", fmt.Errorf("%s: %s at %#x lies in no section with contents", path, s.Name, s.Value)
	}
	return "", fmt.Errorf("%s exports no %s: not a libnrt.so.1 built by nrtabi with a release name (rebuild it: make libnrt)", path, gen.LibnrtReleaseSymbol)
}

// WrongRelease is a libnrt.so.1 built for another release than the one asked for.
type WrongRelease struct {
	Path      string
	Got, Want string
}

func (e *WrongRelease) Error() string {
	return fmt.Sprintf("%s was built for release %s, not %s: rebuild it with make libnrt RELEASE=%s", e.Path, e.Got, e.Want, e.Want)
}

// CheckLibnrtRelease is nil when the library at path was built for release
// want, a *WrongRelease when for another, an error when it names none.
func CheckLibnrtRelease(path, want string) error {
	got, err := LibnrtRelease(path)
	if err != nil {
		return err
	}
	if got != want {
		return &WrongRelease{Path: path, Got: got, Want: want}
	}
	return nil
}
