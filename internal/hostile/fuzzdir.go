package hostile

import (
	"os"
	"testing"
)

// FuzzDir is the directory a fuzz target rewrites its input file in on each
// exec: tmpfs (/dev/shm) when there is one, since truncating a file on a
// busy disk (ext4 with discard) can take seconds and starve the fuzzer;
// else the target's own temporary directory. It is removed with the target.
func FuzzDir(f *testing.F) string {
	dir := f.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "nrtabi-fuzz-"); err == nil {
			dir = d
			f.Cleanup(func() { os.RemoveAll(d) })
		}
	}
	return dir
}
