package gen

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"golang.org/x/mod/modfile"

	"github.com/nrtabi/nrtabi/internal/regfile"
)

// maxGoMod bounds the go.mod read while looking for the checkout: a real
// one is a few hundred bytes.
const maxGoMod = 1 << 20

// NotCheckoutError is a directory with no go.mod of this module in it or
// above it.
type NotCheckoutError struct{ Dir string }

func (e *NotCheckoutError) Error() string {
	return fmt.Sprintf("%s is not inside an nrtabi checkout (no go.mod of module %s in it or above it)", e.Dir, Module)
}

// FindRoot walks up from dir to the directory whose go.mod declares Module
// (docs/nrtabi.md#naming-a-spec): the checkout the generator writes into,
// whose spec/NAME releases --spec finds and release new writes. Outside a
// checkout it is a *NotCheckoutError; a go.mod that cannot be read (not a
// regular file, too large, unreadable) is an error naming it, never a
// silent "not here", and a FIFO in its place is not waited on.
func FindRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "go.mod")
		data, err := regfile.ReadFile(p, maxGoMod)
		switch {
		case err == nil:
			if modfile.ModulePath(data) == Module {
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
