package main

import (
	"context"
	"debug/elf"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/runtime/builder"
	"github.com/nrtabi/nrtabi/spec"
)

// buildLibnrt is `make libnrt`.
func buildLibnrt(ctx context.Context, c *cli.Command, args []string, out, errw io.Writer) error {
	fs := c.Flags(out, errw)
	dir := fs.String("out", "build", "directory to write libnrt.so.1 and its version script to")
	variant := fs.String("variant", string(builder.Versioned), "link variant (the others exist for the dynamic-linker matrix)")
	var sf cli.SpecFlag
	registerRelease(fs, &sf)
	if err := c.Parse(fs, args); err != nil {
		return err
	}
	t, err := openTree(c, &sf, "")
	if err != nil {
		return err
	}
	p, err := t.BuildLibnrt(ctx, *dir, builder.LinkVariant(*variant))
	if err != nil {
		return err
	}
	printLibrary(out, p)
	return nil
}

// registerRelease is --spec of the build commands.
func registerRelease(fs *flag.FlagSet, sf *cli.SpecFlag) {
	sf.Register(fs, "spec", spec.Default, "the release to build (embedded, or spec/NAME of this checkout; it must be generated: make generate RELEASE=NAME)")
}

// openTree opens the generated tree of --spec's release; a library linked
// against libnrt (libnrtDir not "") needs that libnrt.so.1 built first.
func openTree(c *cli.Command, sf *cli.SpecFlag, libnrtDir string) (*builder.Tree, error) {
	release, err := embeddedRelease(c, sf)
	if err != nil {
		return nil, err
	}
	if libnrtDir != "" {
		lib := filepath.Join(libnrtDir, builder.LibnrtFile)
		if _, err := os.Stat(lib); err != nil {
			return nil, c.Errorf("%s: %v (build it first: make libnrt, or --libnrt DIR)", lib, err)
		}
	}
	return builder.Open(release)
}

// printLibrary prints a built library's path and what its dynamic table says.
func printLibrary(out io.Writer, p string) {
	fmt.Fprintf(out, "%s\n", p)
	if s, err := describeLibnrt(p); err == nil {
		fmt.Fprintf(out, "  %s\n", s)
	}
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
	versions := make([]string, 0, len(byVersion))
	for v := range byVersion {
		versions = append(versions, v)
	}
	sort.Strings(versions) // one output for one library
	var parts []string
	for _, v := range versions {
		parts = append(parts, fmt.Sprintf("%d %s", byVersion[v], v))
	}
	needed, _ := f.ImportedLibraries()
	return fmt.Sprintf("SONAME %s; exports %s; DT_NEEDED %s", strings.Join(so, ","), strings.Join(parts, ", "), strings.Join(needed, " ")), nil
}

// buildStubs is `make nccom-stubs`.
func buildStubs(ctx context.Context, c *cli.Command, args []string, out, errw io.Writer) error {
	fs := c.Flags(out, errw)
	libnrt := fs.String("libnrt", "build", "directory holding the libnrt.so.1 the doubles link against")
	dir := fs.String("out", "build/nccom-stubs", "directory to write one subdirectory per double to")
	var sf cli.SpecFlag
	registerRelease(fs, &sf)
	if err := c.Parse(fs, args); err != nil {
		return err
	}
	t, err := openTree(c, &sf, *libnrt)
	if err != nil {
		return err
	}
	for _, st := range t.Stubs() {
		p, err := t.BuildStub(ctx, *libnrt, *dir, st)
		if err != nil {
			return c.Errorf("%s: %v", st.Name, err)
		}
		fmt.Fprintf(out, "%-60s %s\n", p, st.About)
	}
	p, err := t.BuildNetPlugin(ctx, *dir)
	if err != nil {
		return c.Errorf("net plugin: %v", err)
	}
	fmt.Fprintf(out, "%-60s %s\n", p, "net-plugin double (the soft load's target)")
	return nil
}

// embeddedRelease resolves --spec for the build commands and the demo to a
// release name: an embedded release or one the checkout holds under spec/
// (cli.Locate). A spec directory elsewhere has no generated tree and is
// refused; a release whose generated tree is missing is refused by
// builder.Open with the one command that generates it.
func embeddedRelease(c *cli.Command, sf *cli.SpecFlag) (string, error) {
	src, err := cli.Locate(sf.Value)
	if err != nil {
		return "", c.Usagef("%v", err)
	}
	if src.Release == "" {
		return "", c.Usagef("--spec %s: a spec directory has no generated tree to build from; name a release (put the directory at spec/NAME and run make generate RELEASE=NAME first)", src.Dir)
	}
	return src.Release, nil
}

// buildLibnccom is `make libnccom`: the reference libnccom (runtime/libnccom).
func buildLibnccom(ctx context.Context, c *cli.Command, args []string, out, errw io.Writer) error {
	fs := c.Flags(out, errw)
	libnrt := fs.String("libnrt", "build", "directory holding the libnrt.so.1 it links against")
	dir := fs.String("out", "build", "directory to write libnccom.so.2 (and the libnccom.so link) to")
	var sf cli.SpecFlag
	registerRelease(fs, &sf)
	gitHash := fs.String("git-hash", "", "git hash the library reports instead of the release's (a skewed build)")
	sanitize := fs.Bool("sanitize", false, "build with AddressSanitizer and UBSan (preload libasan to load it)")
	if err := c.Parse(fs, args); err != nil {
		return err
	}
	t, err := openTree(c, &sf, *libnrt)
	if err != nil {
		return err
	}
	p, err := t.BuildLibnccom(ctx, *libnrt, *dir, builder.Libnccom{GitHash: *gitHash, Sanitize: *sanitize})
	if err != nil {
		return err
	}
	printLibrary(out, p)
	return nil
}
