package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/regfile"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// maxGoMod bounds the go.mod read while looking for the checkout: a real
// one is a few hundred bytes.
const maxGoMod = 1 << 20

// maxChain bounds the derived_from chain sameAsEmbedded follows; the
// loader refuses a loop, this only keeps the walk finite before it does.
const maxChain = 64

// NotCheckoutError is a directory with no go.mod of this module above it.
type NotCheckoutError struct{ Dir string }

func (e *NotCheckoutError) Error() string {
	return fmt.Sprintf("%s is not inside an nrtabi checkout (no go.mod of module %s in it or above it)", e.Dir, gen.Module)
}

// CheckoutRoot walks up from dir to the directory whose go.mod declares
// this module (docs/nrtabi.md#naming-a-spec): the checkout whose spec/NAME
// releases --spec finds and release new writes. Outside a checkout it is a
// *NotCheckoutError; a go.mod that cannot be read (not a regular file, too
// large, unreadable) is an error naming it, never a silent "not here".
func CheckoutRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "go.mod")
		data, err := regfile.ReadFile(p, maxGoMod)
		switch {
		case err == nil:
			if goModModule(data) == gen.Module {
				return d, nil
			}
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission):
			return "", fmt.Errorf("looking for the nrtabi checkout above %s: %w", abs, err)
		}
		if filepath.Dir(d) == d {
			return "", &NotCheckoutError{Dir: abs}
		}
	}
}

// goModModule is the module path a go.mod declares, "" when it declares
// none: the first line that is not blank or a comment, "module PATH" with
// PATH bare or quoted.
func goModModule(data []byte) string {
	for _, line := range bytes.Split(data, []byte("\n")) {
		l := strings.TrimSpace(string(line))
		if l == "" || strings.HasPrefix(l, "//") {
			continue
		}
		rest, ok := strings.CutPrefix(l, "module")
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
			return ""
		}
		rest, _, _ = strings.Cut(rest, "//")
		rest = strings.TrimSpace(rest)
		if q, err := strconv.Unquote(rest); err == nil {
			return q
		}
		return rest
	}
	return ""
}

// checkoutReleases lists the release directories under root/spec, sorted
// (a directory holding a release.toml); bounded like a spec directory.
func checkoutReleases(root string) []string {
	f, err := os.Open(filepath.Join(root, "spec"))
	if err != nil {
		return nil
	}
	defer f.Close()
	entries, _ := f.ReadDir(spec.MaxSpecDirEntries)
	var out []string
	for _, e := range entries {
		if !e.IsDir() || !releaseName(e.Name()) {
			continue
		}
		if st, err := os.Stat(filepath.Join(root, "spec", e.Name(), "release.toml")); err == nil && st.Mode().IsRegular() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// releaseName reports whether v can name a release directory: a bare name
// the validator accepts for a release, never a path.
func releaseName(v string) bool {
	return v != "" && v != "." && v != ".." && spec.FileNameProblem(v) == "" && !strings.Contains(v, "+")
}

// sameAsEmbedded reports whether the checkout's spec/NAME holds exactly the
// embedded release's files, and so does each release it derives from that
// the checkout also holds: then the two are one release and the embedded
// (compiled, faster) form is read. Anything unreadable or over a bound
// counts as different; the loader then reports it by name.
func sameAsEmbedded(root, name string) bool {
	for depth := 0; name != "" && depth < maxChain; depth++ {
		dir := filepath.Join(root, "spec", name)
		st, err := os.Stat(dir)
		if err != nil {
			return errors.Is(err, fs.ErrNotExist) && depth > 0 && embedded(name) // a parent only embedded: both read it
		}
		if !st.IsDir() || !embedded(name) || !sameFiles(dir, name) {
			return false
		}
		s, err := compiled.Load(name)
		if err != nil {
			return false
		}
		name = s.Release.DerivedFrom
	}
	return name == ""
}

func embedded(name string) bool {
	for _, r := range spec.Releases() {
		if r == name {
			return true
		}
	}
	return false
}

// sameFiles compares the *.toml files of dir with the embedded release's.
func sameFiles(dir, name string) bool {
	want, err := fs.Glob(spec.Embedded, name+"/*.toml")
	if err != nil {
		return false
	}
	got, err := filepath.Glob(filepath.Join(dir, "*.toml"))
	if err != nil || len(got) != len(want) || len(got) > spec.MaxSpecDirFiles {
		return false
	}
	var total int64
	for _, w := range want {
		e, err := fs.ReadFile(spec.Embedded, w)
		if err != nil {
			return false
		}
		c, err := regfile.ReadFile(filepath.Join(dir, filepath.Base(w)), spec.MaxSpecFileSize)
		if total += int64(len(c)); err != nil || total > spec.MaxSpecDirSize || !bytes.Equal(e, c) {
			return false
		}
	}
	return true
}
