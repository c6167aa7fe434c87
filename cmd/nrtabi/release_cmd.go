package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/nrtabi/nrtabi/layoutcheck"
	"github.com/nrtabi/nrtabi/layoutcheck/release"
	"github.com/nrtabi/nrtabi/layoutcheck/releasediff"
	"github.com/nrtabi/nrtabi/spec"
)

func init() {
	register(&command{name: "release new", summary: "make spec/NAME from an old release and what the new binaries show", run: releaseNew})
}

func releaseNew(args []string, out, errw io.Writer) int {
	fs := newFlags("release new", errw)
	from := fs.String("from", spec.Default, "the release the new one derives from (embedded, or a directory under --spec-root)")
	name := fs.String("name", "", "the new release's name (its directory under --spec-root)")
	root := fs.String("spec-root", "spec", "the directory holding the release directories")
	force := fs.Bool("force", false, "replace spec-root/NAME if it exists")
	headers := fs.String("headers", "", "the new release's C headers: their structs are read like a binary's DWARF (compiled with gcc -g in a temporary directory)")
	var bins, dbg, include listFlag
	fs.Var(&include, "include", "with --headers: a header to read, relative to DIR (repeatable, or a comma list); default every *.h")
	fs.Var(&bins, "binary", "a binary of the new release (repeatable, or a comma list): libnrt, libnccom, or any object with their DWARF")
	fs.Var(&dbg, "debug-dir", "where to look for separate debug files (repeatable; default /usr/lib/debug)")
	if rc := parse(fs, args); rc >= 0 {
		return rc
	}
	if *name == "" || len(bins) == 0 && *headers == "" || fs.NArg() > 0 || len(include) > 0 && *headers == "" {
		fmt.Fprintln(errw, "usage: nrtabi release new --from OLD --name NEW (--binary FILE [--binary FILE]... | --headers DIR [--include FILE]...)")
		return exitUsage
	}
	label := map[string]string{}
	if *headers != "" {
		h, err := layoutcheck.CompileHeaders(*headers, include)
		if err != nil {
			return layoutError(errw, "release new", err)
		}
		defer h.Close()
		for _, n := range h.Notes {
			fmt.Fprintf(out, "note: %s\n", n)
		}
		bins = append(bins, h.Object)
		label[h.Object] = h.Source()
	}
	base, err := loadRelease(*from, *root)
	if err != nil {
		return reportSpecError(errw, *from, err)
	}
	rel, obs, err := newReleaseFrom(base, *name, bins, debugDirs(dbg), *root)
	if err == nil {
		err = rel.Write(filepath.Join(*root, *name), *force)
	}
	if err != nil {
		return reportSpecError(errw, filepath.Join(*root, *name), err)
	}
	s := rel.Spec
	for _, in := range obs.Inputs {
		if l, ok := label[in.Path]; ok {
			fmt.Fprintf(out, "read %s\n", l)
			continue
		}
		fmt.Fprintf(out, "read %s as %s (SONAME %q, build-id %s)\n", in.Path, in.Role, in.SONAME, orNone(in.BuildID))
	}
	fmt.Fprintf(out, "wrote %s: derived from %s, %d structs confirmed from DWARF, %d facts carried over unconfirmed\n",
		filepath.Join(*root, *name), base.Release.Name, len(obs.StructNames), len(s.Release.CarriedOver))
	s.Dir = filepath.Join(*root, *name) // where it landed
	r := releasediff.Diff(base, s)
	r.WriteText(out)
	fmt.Fprintf(out, "next: make generate RELEASE=%s\n", *name)
	return exitOK
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// loadRelease reads a release by name: from root/NAME when that exists, else embedded.
func loadRelease(name, root string) (*spec.Spec, error) {
	if st, err := os.Stat(filepath.Join(root, name)); err == nil && st.IsDir() {
		return spec.LoadDir(filepath.Join(root, name))
	}
	return spec.Load(name)
}

// newReleaseFrom observes the binaries against base and makes the derived
// release in memory, validated as it would load from root/name.
func newReleaseFrom(base *spec.Spec, name string, bins, debugDirs []string, root string) (*release.Release, *release.Observed, error) {
	obs, err := release.Observe(bins, base, debugDirs)
	if err != nil {
		return nil, nil, err
	}
	rel, err := release.New(base, name, obs, root)
	return rel, obs, err
}
