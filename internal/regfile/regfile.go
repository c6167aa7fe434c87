// Package regfile is the one way nrtabi opens an input file by name: only a
// regular file is opened (a FIFO, a device, a socket or a directory is
// refused by what it is), the open never blocks, and a read stops at a
// bound with an error naming the file and the bound. Callers add their own
// advice to the typed errors (NotRegularError, TooLargeError).
package regfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Open opens path for reading only if it is a regular file. The open itself
// never blocks (O_NONBLOCK: a FIFO swapped in after a check would otherwise
// wait for a writer forever), and the type is checked on the opened file,
// so no race can slip a device or a FIFO through. A path that is not a
// regular file is a *NotRegularError.
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Path: path, Mode: st.Mode()}
	}
	if TestHookOpened != nil {
		TestHookOpened(path)
	}
	return f, st, nil
}

// TestHookOpened, when a test sets it, runs once Open has checked a file
// and before it returns: the moment another process may truncate or rewrite
// the file under its reader, made deterministic (elfread's fault test).
var TestHookOpened func(path string)

// ReadFile reads the regular file at path, of at most max bytes; a larger
// one is a *TooLargeError.
func ReadFile(path string, max int64) ([]byte, error) {
	f, st, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAtMost(f, path, st.Size(), max)
}

// ReadFS is ReadFile on a file system: the name is stat'ed before it is
// opened (fs.FS has no non-blocking open), and checked again once open.
func ReadFS(fsys fs.FS, name string, max int64) ([]byte, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &NotRegularError{Path: name, Mode: st.Mode()}
	}
	if st.Size() > max {
		return nil, &TooLargeError{Path: name, Size: st.Size(), Max: max}
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &NotRegularError{Path: name, Mode: st.Mode()}
	}
	return readAtMost(f, name, st.Size(), max)
}

// readAtMost reads r to its end, refusing more than max bytes. The size may
// change between the stat and the read: one byte more than max is read to
// notice.
func readAtMost(r io.Reader, name string, size, max int64) ([]byte, error) {
	if size > max {
		return nil, &TooLargeError{Path: name, Size: size, Max: max}
	}
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &TooLargeError{Path: name, Size: -1, Max: max}
	}
	return b, nil
}

// NotRegularError is a path that names something other than a regular file.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

// What says what the path names instead: "a FIFO, not a regular file".
func (e *NotRegularError) What() string {
	switch {
	case e.Mode.IsDir():
		return "a directory, not a regular file"
	case e.Mode&fs.ModeNamedPipe != 0:
		return "a FIFO, not a regular file"
	case e.Mode&fs.ModeDevice != 0:
		return "a device, not a regular file"
	case e.Mode&fs.ModeSocket != 0:
		return "a socket, not a regular file"
	}
	return "not a regular file"
}

func (e *NotRegularError) Error() string { return e.Path + " is " + e.What() }

// TooLargeError is a file over the bound a reader set.
type TooLargeError struct {
	Path string
	Size int64 // -1: it grew past Max while it was read
	Max  int64
}

func (e *TooLargeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("%s: more than %d bytes, the bound for it", e.Path, e.Max)
	}
	return fmt.Sprintf("%s: %d bytes, over the %d-byte bound for it", e.Path, e.Size, e.Max)
}

// Kind names what mode describes, for a message that says what a path is
// instead of what was wanted: "a FIFO", "a symbolic link", "a character
// device". It reads the mode of an Lstat, so a link is named as a link.
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "a special file"
}
