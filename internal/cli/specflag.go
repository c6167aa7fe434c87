package cli

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// SpecFlag is --spec NAME|DIR, the one way every command names a spec.
// Resolve documents the order in which a value is read.
type SpecFlag struct{ Value string }

// Register adds --spec to fs, defaulting to def ("" for no default).
func (f *SpecFlag) Register(fs *flag.FlagSet, name, def, usage string) {
	f.Value = def
	fs.StringVar(&f.Value, name, def, usage+": an embedded release NAME or a spec DIR on disk (see 'nrtabi help spec')")
}

// Load reads the spec f names (see Resolve).
func (f *SpecFlag) Load() (*spec.Spec, string, error) { return Resolve(f.Value) }

// SpecSource is where a spec value resolved to.
type SpecSource struct {
	Dir     string // a directory on disk, or ""
	Release string // an embedded release, or ""
}

// Where names the source for messages.
func (s SpecSource) Where() string {
	if s.Dir != "" {
		return s.Dir
	}
	return "spec/" + s.Release + " (embedded)"
}

// ResolveOrder is the documented order of Resolve, for help texts.
const ResolveOrder = "a value with a path separator, or naming an existing directory, is a spec directory on disk; otherwise it names an embedded release"

// NameError is a spec value that names neither a directory nor an embedded
// release: a command-line mistake (ExitUsage), not a bad spec.
type NameError struct{ Msg string }

func (e *NameError) Error() string { return e.Msg }

func nameErrorf(format string, args ...any) error { return &NameError{fmt.Sprintf(format, args...)} }

// Locate decides what a spec value names, reading nothing but the file
// system's answer to "is this a directory":
//  1. a value containing a path separator is a directory (it must exist);
//  2. a value naming an existing directory is that directory;
//  3. a value naming an embedded release is that release;
//  4. anything else is an error listing the embedded releases.
func Locate(v string) (SpecSource, error) {
	if v == "" {
		return SpecSource{}, nameErrorf("no spec named: give --spec with an embedded release (%s) or a spec directory", strings.Join(spec.Releases(), ", "))
	}
	st, err := os.Stat(v)
	isDir := err == nil && st.IsDir()
	if strings.ContainsRune(v, os.PathSeparator) || strings.ContainsRune(v, '/') {
		if !isDir {
			if err == nil {
				return SpecSource{}, nameErrorf("spec %s: not a directory (a spec is a directory of TOML files, or an embedded release: %s)", v, strings.Join(spec.Releases(), ", "))
			}
			return SpecSource{}, nameErrorf("spec %s: no such directory (embedded releases: %s)", v, strings.Join(spec.Releases(), ", "))
		}
		return SpecSource{Dir: v}, nil
	}
	if isDir {
		return SpecSource{Dir: v}, nil
	}
	for _, r := range spec.Releases() {
		if r == v {
			return SpecSource{Release: v}, nil
		}
	}
	return SpecSource{}, nameErrorf("spec %q: neither a directory nor an embedded release; the embedded releases are: %s", v, strings.Join(spec.Releases(), ", "))
}

// Resolve reads the spec a value names (order: Locate). Embedded releases
// load from their compiled form when it is current (spec/compiled).
func Resolve(v string) (*spec.Spec, string, error) { return resolve(v, compiled.Load) }

// ResolveTOML is Resolve reading an embedded release from its TOML, never
// from a (possibly stale) compiled form: the generator's reader.
func ResolveTOML(v string) (*spec.Spec, string, error) { return resolve(v, spec.Load) }

func resolve(v string, embedded func(string) (*spec.Spec, error)) (*spec.Spec, string, error) {
	src, err := Locate(v)
	if err != nil {
		return nil, v, err
	}
	if src.Dir != "" {
		s, err := spec.LoadDir(src.Dir)
		return s, src.Where(), err
	}
	s, err := embedded(src.Release)
	return s, src.Where(), err
}
