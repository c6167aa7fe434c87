package elfread

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestGuardFaultAfterClose: a file truncated while mapped, whose File is
// closed by a deferred Close as the fault unwinds (the usual shape: open,
// defer Close, read), is still the *InputError naming the file, not an
// unnamed runtime error ("invalid memory address or nil pointer
// dereference") the caller reports as its own bug. (Before, Close
// forgot the mapping before the recover could name it.)
func TestGuardFaultAfterClose(t *testing.T) {
	path := manyPagesObject(t)
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = errors.New("panic passed Guard: " + strings.ReplaceAll(errString(r), "\n", " "))
			}
		}()
		err = Guard(func() error {
			f, err := Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := os.Truncate(path, 4096); err != nil {
				return err
			}
			dbg, err := FindDebug(context.Background(), f, Lookup{})
			if err != nil {
				return err
			}
			defer dbg.Close()
			_, err = dbg.FindStructs([][]string{{"no_such_struct"}})
			return err
		})
	}()
	var ie *InputError
	if !errors.As(err, &ie) || ie.Path != path || !strings.Contains(err.Error(), "changed while it was being read") {
		t.Fatalf("want an InputError naming %s, got %v", path, err)
	}
}

func errString(r any) string {
	if e, ok := r.(error); ok {
		return e.Error()
	}
	return "non-error panic"
}
