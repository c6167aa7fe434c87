package elfdwarf

import (
	"os"
	"syscall"
)

// OpenRegular opens path for reading only if it is a regular file. The open
// itself never blocks (O_NONBLOCK: a FIFO swapped in after a check would
// otherwise wait for a writer forever), and the type is checked on the
// opened file, so no race can slip a device or a FIFO through.
func OpenRegular(path string) (*os.File, os.FileInfo, error) {
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
		what := "not a regular file"
		switch {
		case st.IsDir():
			what = "a directory, not a regular file"
		case st.Mode()&os.ModeNamedPipe != 0:
			what = "a FIFO, not a regular file"
		case st.Mode()&os.ModeDevice != 0:
			what = "a device, not a regular file"
		case st.Mode()&os.ModeSocket != 0:
			what = "a socket, not a regular file"
		}
		return nil, nil, &NotRegularError{What: what}
	}
	return f, st, nil
}

// NotRegularError is a path that names something other than a regular file.
type NotRegularError struct{ What string }

func (e *NotRegularError) Error() string { return e.What }
