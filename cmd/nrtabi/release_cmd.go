package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/internal/esc"
	"github.com/nrtabi/nrtabi/layoutcheck"
	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/release/diff"
	"github.com/nrtabi/nrtabi/spec"
)

func releaseNewCommand() *cli.Command {
	return &cli.Command{Name: "release new", Summary: "make spec/NAME from an old release and what the new binaries show",
		Synopsis: "--name NEW [--spec NAME|DIR] [-o DIR] [--force] [--runtime-version V] [--collectives-version V] (--binary FILE [--binary FILE]... | --headers DIR [--include FILE]... [-I DIR]... [--cflags FLAGS])",
		Example:  "release new --spec 2.31.24 --name 2.32.0 --binary libnrt.so.1,libnccom.so.2",
		Run:      releaseNew}
}

func releaseNew(ctx context.Context, c *cli.Command, args []string, out, errw io.Writer) error {
	fs := c.Flags(out, errw)
	var from cli.SpecFlag
	from.Register(fs, "spec", spec.Default, "the release the new one derives from")
	name := fs.String("name", "", "the new release's name")
	outDir := fs.String("out", "", "the directory to write the new release to (default: spec/NAME at the root of the checkout above the working directory)")
	fs.StringVar(outDir, "o", "", "short for --out")
	force := fs.Bool("force", false, "replace the --out directory if it exists")
	var id release.Identity
	fs.StringVar(&id.RuntimeVersion, "runtime-version", "", "the version the new libnrt reports (major.minor.patch[.maintenance]), as the vendor states it; default: unknown")
	fs.StringVar(&id.CollectivesVersion, "collectives-version", "", "the new libnccom's version, as the vendor states it; default: unknown")
	headers := fs.String("headers", "", "the new release's C headers: their structs are read like a binary's DWARF (compiled with gcc -g in a temporary directory)")
	var bins cli.ListFlag
	var cf compileFlags
	cf.register(fs, "with --headers")
	fs.Var(&bins, "binary", "a binary of the new release (repeatable, or a comma list): libnrt, libnccom, the net plugin (libnccom-net.so, or any file exporting ncclNetPlugin_v* tables), or any object with their DWARF")
	var dbg debugDirFlag
	dbg.register(fs)
	if err := c.Parse(fs, args); err != nil {
		return err
	}
	switch {
	case *name == "":
		return c.Usagef("--name is required")
	case len(bins) == 0 && *headers == "":
		return c.Usagef("name the new release's binaries (--binary) or headers (--headers)")
	case cf.given() && *headers == "":
		return c.Usagef("--include, -I and --cflags are how the headers under --headers DIR are compiled; give --headers too")
	}
	if p := releaseNameProblem(*name); p != "" {
		return c.Usagef("--name %q: %s", *name, p)
	}
	for _, v := range []struct{ flag, v string }{{"--runtime-version", id.RuntimeVersion}, {"--collectives-version", id.CollectivesVersion}} {
		if p := spec.VersionProblem(v.v); v.v != "" && p != "" {
			return c.Usagef("%s %q: %s", v.flag, v.v, p)
		}
	}
	// The release lands in the checkout's spec/NAME wherever the command
	// runs from, or exactly where -o says (docs/nrtabi-release-new.md).
	dest, root := *outDir, ""
	if dest != "" && filepath.Base(filepath.Clean(dest)) != *name {
		return c.Usagef("-o %s: a release directory is named after the release; end it in /%s", dest, *name)
	}
	if dest == "" {
		wd, err := os.Getwd()
		if err == nil {
			root, err = gen.FindRoot(wd)
		}
		var nc *gen.NotCheckoutError
		if errors.As(err, &nc) {
			return c.Usagef("%v; run it inside a checkout to write spec/%s there, or give -o DIR", err, *name)
		}
		if err != nil {
			return err
		}
		dest = filepath.Join(root, "spec", *name)
	}
	if p := releaseTagCollision(*name, filepath.Dir(dest)); p != "" {
		return c.Usagef("--name %q: %s", *name, p)
	}
	if err := release.CheckDest(dest, release.WriteOptions{Force: *force}); err != nil {
		return err
	}
	base, where, err := from.Load()
	if err != nil {
		return specError(c, where, err)
	}
	label := map[string]string{}
	if *headers != "" {
		h, err := layoutcheck.CompileHeadersContext(ctx, *headers, cf.options(base))
		if err != nil {
			return layoutError(err)
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
		id.Headers = cf.provenance(*headers, h)
	}
	rel, obs, err := newReleaseWith(ctx, base, *name, bins, dbg.get(), filepath.Dir(dest), id)
	if err == nil {
		err = rel.Write(dest, release.WriteOptions{Force: *force})
	}
	if err != nil {
		return specError(c, dest, err)
	}
	for _, in := range obs.Inputs {
		if l, ok := label[in.Path]; ok {
			fmt.Fprintf(out, "read %s\n", esc.String(l))
			continue
		}
		fmt.Fprintf(out, "read %s as %s (SONAME %q, build-id %s)\n", esc.String(in.Path), in.Role, in.SONAME, esc.String(orNone(in.BuildID)))
		if obs.Libnet != nil && in.Path == obs.Libnet.Path && obs.Net != nil {
			// What the plugin says of itself, and what it does not
			// (docs/nrtabi-release-new.md#the-net-plugin).
			fmt.Fprintf(out, "  net plugin: %s\n", esc.String(obs.Net.Summary()))
		}
	}
	fmt.Fprintf(out, "wrote %s: derived from %s, %d structs confirmed from DWARF, %d facts carried over unconfirmed\n",
		esc.String(dest), base.Release.Name, len(obs.StructNames), len(rel.Spec.Release.CarriedOver))
	s := rel.Spec
	s.Dir = dest // where it landed
	r := diff.Diff(base, s)
	r.Quoted = true // release new's own exit status is 0: it wrote the release
	r.WriteText(out)
	printNext(out, dest, root, base.Release.Name, *name)
	return nil
}

// releaseNameProblem says why name cannot be a release's name ("" when it
// can): the rule the validator holds [release] name to, checked before the
// name becomes a path.
func releaseNameProblem(name string) string {
	switch {
	case name == "":
		return "it is empty"
	case name == "." || name == "..":
		return "it is not a release name"
	case strings.Contains(name, "+"):
		return "it holds \"+\"; use letters, digits, ., _ and -"
	}
	return spec.FileNameProblem(name)
}

// releaseTagCollision says which existing release name's build tag is
// already taken by ("" when none): 2-31-24 and 2_31_24 select the same
// generated files as 2.31.24 (docs/generator.md#building-for-a-release), so
// the generator would refuse the pair later; the name is refused now,
// naming the release it collides with. The releases are the embedded ones
// and those in specDir (the spec/ directory the new one goes to).
func releaseTagCollision(name, specDir string) string {
	names := spec.Releases()
	if entries, err := os.ReadDir(specDir); err == nil {
		for _, e := range entries {
			if st, err := os.Stat(filepath.Join(specDir, e.Name(), "release.toml")); err == nil && st.Mode().IsRegular() {
				names = append(names, e.Name())
			}
		}
	}
	tag := gen.ReleaseTag(name)
	for _, o := range names {
		if o != name && gen.ReleaseTag(o) == tag {
			return fmt.Sprintf("its build tag %s is release %s's (. and - become _); choose a name that differs from %s in more than punctuation", tag, o, o)
		}
	}
	return ""
}

// printNext prints the steps after release new, each runnable exactly as
// printed from any directory, with an installed nrtabi as with go run
// (docs/adding-a-release.md): inside a checkout, from its root; a release
// written outside one can be validated and compared, and must be moved to a
// checkout's spec/NAME to be generated and built.
func printNext(out io.Writer, dest, root, base, name string) {
	if root == "" {
		if r, err := gen.FindRoot(filepath.Dir(dest)); err == nil && filepath.Clean(dest) == filepath.Join(r, "spec", name) {
			root = r
		}
	}
	if root == "" {
		fmt.Fprintf(out, "next: nrtabi spec validate %s\n", shellWord(dest))
		fmt.Fprintf(out, "next: nrtabi diff %s %s\n", shellWord(base), shellWord(dest))
		fmt.Fprintf(out, "next: to generate and build it, move it to spec/%s of an nrtabi checkout and run release new's steps there (docs/adding-a-release.md)\n", name)
		return
	}
	n := shellWord(name)
	fmt.Fprintf(out, "next: cd %s\n", shellWord(root))
	for _, step := range []string{
		"make generate RELEASE=" + n,
		"make libnrt libnccom RELEASE=" + n,
		// The demo runs Go steps too, so it is built for the release
		// (docs/generator.md#building-for-a-release).
		"go run -tags " + gen.ReleaseTag(name) + " ./cmd/nrtabi-runtime demo --spec " + n,
		"nrtabi check --spec " + n + " build/*.so*",
	} {
		fmt.Fprintf(out, "next: %s\n", step)
	}
}

// shellWord is s as one POSIX shell word: bare when it holds only safe
// bytes, else single-quoted; escaped for the terminal either way.
func shellWord(s string) string {
	safe := s != ""
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("._-/+=:,@%", c) >= 0) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return esc.String("'" + strings.ReplaceAll(s, "'", `'\''`) + "'")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// newReleaseWith observes the binaries against base and makes the derived
// release in memory, validated as it would load from root/name, with the
// versions the user states. (diff's sides, which may be packages, go
// through diffSide.)
func newReleaseWith(ctx context.Context, base *spec.Spec, name string, bins, debugDirs []string, root string, id release.Identity) (*release.Release, *release.Observed, error) {
	obs, err := release.Observe(ctx, bins, base, release.ObserveOptions{DebugDirs: debugDirs, Fetch: cli.Debuginfod()})
	if err != nil {
		return nil, nil, err
	}
	rel, err := release.NewWith(base, name, obs, root, id)
	return rel, obs, err
}
