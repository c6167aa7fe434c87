package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/esc"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// SpecFlag is --spec NAME|DIR, the one way every command names a spec.
// Resolve documents the order in which a value is read.
type SpecFlag struct {
	Value string
	notes io.Writer // the command's stderr (the flag set's output): which release a name found
}

// Register adds --spec to fs, defaulting to def ("" for no default).
func (f *SpecFlag) Register(fs *flag.FlagSet, name, def, usage string) {
	f.Value = def
	f.notes = fs.Output()
	fs.StringVar(&f.Value, name, def, usage+": a spec DIR, or a release NAME (the checkout's spec/NAME, else the embedded one; docs/nrtabi.md#naming-a-spec)")
}

// Load reads the spec f names (see Locate), saying on the command's stderr
// when a checkout release shadows an embedded one that differs.
func (f *SpecFlag) Load() (*spec.Spec, string, error) { return ResolveTo(f.Value, f.notes) }

// SpecSource is where a spec value resolved to.
type SpecSource struct {
	Dir string // a directory on disk, or ""
	// Release is the release a bare name found: embedded when Dir is "",
	// else the checkout's spec/NAME (Dir is then ROOT/spec/NAME).
	Release string
	// Note, when not "", says which of two different releases of one name
	// was chosen (a checkout release shadowing the embedded one).
	Note string
}

// Checkout reports whether the source is a release of the current
// checkout (spec/NAME at the module root), not a path given by the user.
func (s SpecSource) Checkout() bool { return s.Dir != "" && s.Release != "" }

// Where names the source for messages.
func (s SpecSource) Where() string {
	if s.Dir != "" {
		return s.Dir
	}
	return "spec/" + s.Release + " (embedded)"
}

// ResolveOrder is the documented order of Locate, for help texts.
const ResolveOrder = "a value with a path separator, or naming an existing directory, is a spec directory on disk; " +
	"otherwise a release NAME: the current checkout's spec/NAME if there is one, else the embedded release"

// NameError is a spec value that names neither a directory nor a release:
// a command-line mistake (ExitUsage), not a bad spec.
type NameError struct{ Msg string }

func (e *NameError) Error() string { return e.Msg }

func nameErrorf(format string, args ...any) error { return &NameError{fmt.Sprintf(format, args...)} }

// Locate decides what a spec value names, in the one order of
// docs/nrtabi.md#naming-a-spec, reading nothing but the file system's
// answer to "is this a directory" and, for a bare name, the checkout's
// release files (to tell whether they are the embedded ones):
//  1. a value containing a path separator is a directory (it must exist);
//  2. a value naming an existing directory is that directory;
//  3. a release name the current checkout holds (spec/NAME at the root of
//     the module checkout above the working directory) is that directory —
//     read as the embedded release when its files (and those of the
//     releases it derives from) are the embedded ones byte for byte, and
//     otherwise shadowing an embedded release of the same name, with a Note;
//  4. a value naming an embedded release is that release;
//  5. anything else is an error listing the releases there are.
func Locate(v string) (SpecSource, error) {
	if v == "" {
		return SpecSource{}, nameErrorf("no spec named: give --spec with an embedded release (%s)%s or a spec directory", strings.Join(spec.Releases(), ", "), checkoutOnly())
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
		return dirNamedAsRelease(v)
	}
	if releaseName(v) {
		root, err := checkoutRoot()
		if err != nil {
			return SpecSource{}, err
		}
		if root != "" {
			dir := filepath.Join(root, "spec", v)
			if st, err := os.Stat(dir); err == nil && st.IsDir() {
				switch {
				case !embedded(v):
					return SpecSource{Dir: dir, Release: v}, nil
				case sameAsEmbedded(root, v):
					return SpecSource{Release: v}, nil
				default:
					return SpecSource{Dir: dir, Release: v, Note: fmt.Sprintf("--spec %s: using the checkout's %s, which differs from the embedded release %s (this binary's copy)", v, dir, v)}, nil
				}
			}
		}
	}
	if embedded(v) {
		return SpecSource{Release: v}, nil
	}
	return SpecSource{}, nameErrorf("spec %q: neither a directory nor an embedded release; the embedded releases are: %s%s", v, strings.Join(spec.Releases(), ", "), checkoutOnly())
}

// dirNamedAsRelease is step 2 of Locate: v, a bare name, is a directory
// of the working directory. When v is also a release's name (embedded, or
// the checkout's), the directory wins, and a Note names the directory read
// so that --spec 2.31.24 run beside a stray ./2.31.24 never reads it
// silently (docs/nrtabi.md#naming-a-spec). The checkout's own spec/NAME,
// reached from spec/, is that release (step 3), no stray directory.
func dirNamedAsRelease(v string) (SpecSource, error) {
	if !releaseName(v) {
		return SpecSource{Dir: v}, nil
	}
	abs, err := filepath.Abs(v)
	if err != nil {
		abs = v
	}
	root, err := checkoutRoot()
	if err != nil {
		return SpecSource{}, err
	}
	release := embedded(v)
	if root != "" {
		own := filepath.Join(root, "spec", v)
		if st, err := os.Stat(own); err == nil && st.IsDir() {
			if same, err := sameDir(abs, own); err == nil && same {
				switch {
				case !embedded(v):
					return SpecSource{Dir: own, Release: v}, nil
				case sameAsEmbedded(root, v):
					return SpecSource{Release: v}, nil
				default:
					return SpecSource{Dir: own, Release: v, Note: fmt.Sprintf("--spec %s: using the checkout's %s, which differs from the embedded release %s (this binary's copy)", v, own, v)}, nil
				}
			}
			release = true
		}
	}
	if !release {
		return SpecSource{Dir: v}, nil
	}
	return SpecSource{Dir: v, Note: fmt.Sprintf("--spec %s: reading the directory %s (in the working directory), not the release %s of the same name; name it ./%s to mean the directory, or run from elsewhere for the release", v, abs, v, v)}, nil
}

// sameDir reports whether a and b are one directory.
func sameDir(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(sa, sb), nil
}

// checkoutRoot is the checkout above the working directory, "" outside one.
func checkoutRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", nil // no working directory: no checkout to look in
	}
	root, err := gen.FindRoot(wd)
	var nc *gen.NotCheckoutError
	if errors.As(err, &nc) {
		return "", nil
	}
	return root, err
}

// checkoutOnly names the releases the current checkout holds that are not
// embedded, for an error listing what --spec may name ("" when none).
func checkoutOnly() string {
	root, err := checkoutRoot()
	if err != nil || root == "" {
		return ""
	}
	var extra []string
	for _, r := range checkoutReleases(root) {
		if !embedded(r) {
			extra = append(extra, r)
		}
	}
	if len(extra) == 0 {
		return ""
	}
	return "; this checkout's spec/ also holds: " + strings.Join(extra, ", ")
}

// Resolve reads the spec a value names (order: Locate). Embedded releases
// load from their compiled form when it is current (spec/compiled). A note
// Locate makes is dropped; commands use ResolveTo or SpecFlag.Load.
func Resolve(v string) (*spec.Spec, string, error) { return resolve(v, compiled.Load, nil) }

// ResolveTo is Resolve writing Locate's note, if any, to notes.
func ResolveTo(v string, notes io.Writer) (*spec.Spec, string, error) {
	return resolve(v, compiled.Load, notes)
}

// ResolveTOML is Resolve reading an embedded release from its TOML, never
// from a (possibly stale) compiled form: the generator's reader.
func ResolveTOML(v string) (*spec.Spec, string, error) { return resolve(v, spec.Load, nil) }

func resolve(v string, embeddedLoad func(string) (*spec.Spec, error), notes io.Writer) (*spec.Spec, string, error) {
	src, err := Locate(v)
	if err != nil {
		return nil, v, err
	}
	if src.Note != "" && notes != nil {
		fmt.Fprintf(notes, "note: %s\n", esc.String(src.Note))
	}
	if src.Dir != "" {
		s, err := spec.LoadDir(src.Dir)
		return s, src.Where(), err
	}
	s, err := embeddedLoad(src.Release)
	return s, src.Where(), err
}
