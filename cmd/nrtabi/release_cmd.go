package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/internal/esc"
	"github.com/nrtabi/nrtabi/layoutcheck"
	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/release/diff"
	"github.com/nrtabi/nrtabi/spec"
)

func init() {
	app.Register(&cli.Command{Name: "release new", Summary: "make spec/NAME from an old release and what the new binaries show",
		Synopsis: "--name NEW [--spec NAME|DIR] [--out DIR] [--force] (--binary FILE [--binary FILE]... | --headers DIR [--include FILE]...)",
		Example:  "release new --spec 2.31.24 --name 2.32.0 --binary libnrt.so.1,libnccom.so.2",
		Run:      releaseNew})
}

func releaseNew(c *cli.Command, args []string, out, errw io.Writer) int {
	fs := c.Flags(errw)
	var from cli.SpecFlag
	from.Register(fs, "spec", spec.Default, "the release the new one derives from")
	name := fs.String("name", "", "the new release's name")
	outDir := fs.String("out", "", "the directory to write the new release to (default: spec/NAME)")
	force := fs.Bool("force", false, "replace the --out directory if it exists")
	headers := fs.String("headers", "", "the new release's C headers: their structs are read like a binary's DWARF (compiled with gcc -g in a temporary directory)")
	var bins, include cli.ListFlag
	fs.Var(&include, "include", "with --headers: a header to read, relative to DIR (repeatable, or a comma list); default every *.h")
	fs.Var(&bins, "binary", "a binary of the new release (repeatable, or a comma list): libnrt, libnccom, or any object with their DWARF")
	var dbg debugDirFlag
	dbg.register(fs)
	if rc := c.Parse(fs, args, errw); rc >= 0 {
		return rc
	}
	switch {
	case *name == "":
		return c.Usagef(errw, "--name is required")
	case len(bins) == 0 && *headers == "":
		return c.Usagef(errw, "name the new release's binaries (--binary) or headers (--headers)")
	case len(include) > 0 && *headers == "":
		return c.Usagef(errw, "--include names a header under --headers DIR; give --headers too")
	}
	dest := *outDir
	if dest == "" {
		dest = filepath.Join("spec", *name)
	}
	base, where, err := from.Load()
	if err != nil {
		return reportSpecError(c, errw, where, err)
	}
	label := map[string]string{}
	if *headers != "" {
		h, err := layoutcheck.CompileHeadersContext(context.Background(), *headers, layoutcheck.HeaderOptions{Include: include, Spec: base})
		if err != nil {
			return layoutError(c, errw, err)
		}
		defer h.Close()
		for _, n := range h.Notes {
			fmt.Fprintf(out, "note: %s\n", esc.String(n))
		}
		for _, w := range h.Warnings {
			fmt.Fprintf(errw, "%s: warning: %s\n", c.FullName(), esc.String(w))
		}
		bins = append(bins, h.Object)
		label[h.Object] = h.Source()
	}
	rel, obs, err := newReleaseFrom(base, *name, bins, dbg.get(), filepath.Dir(dest))
	if err == nil {
		err = rel.Write(dest, release.WriteOptions{Force: *force})
	}
	if err != nil {
		return reportSpecError(c, errw, dest, err)
	}
	for _, in := range obs.Inputs {
		if l, ok := label[in.Path]; ok {
			fmt.Fprintf(out, "read %s\n", esc.String(l))
			continue
		}
		fmt.Fprintf(out, "read %s as %s (SONAME %q, build-id %s)\n", esc.String(in.Path), in.Role, in.SONAME, esc.String(orNone(in.BuildID)))
	}
	fmt.Fprintf(out, "wrote %s: derived from %s, %d structs confirmed from DWARF, %d facts carried over unconfirmed\n",
		esc.String(dest), base.Release.Name, len(obs.StructNames), len(rel.Spec.Release.CarriedOver))
	s := rel.Spec
	s.Dir = dest // where it landed
	r := diff.Diff(base, s)
	r.WriteText(out)
	fmt.Fprintf(out, "next: make generate RELEASE=%s\n", *name)
	return cli.ExitOK
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// newReleaseFrom observes the binaries against base and makes the derived
// release in memory, validated as it would load from root/name.
func newReleaseFrom(base *spec.Spec, name string, bins, debugDirs []string, root string) (*release.Release, *release.Observed, error) {
	obs, err := release.Observe(bins, base, release.ObserveOptions{DebugDirs: debugDirs})
	if err != nil {
		return nil, nil, err
	}
	rel, err := release.New(base, name, obs, root)
	return rel, obs, err
}
