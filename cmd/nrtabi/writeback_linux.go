//go:build linux && (amd64 || arm64)

package main

import (
	"os"
	"syscall"
)

// syncFileRangeWrite is SYNC_FILE_RANGE_WRITE: start writing the dirty
// pages of the range, do not wait for them (sync_file_range(2)).
const syncFileRangeWrite = 2

// startWriteback starts the writeback of n bytes of f from off. Its
// result is not looked at: the fsync that follows is the check.
func startWriteback(f *os.File, off, n int64) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		syscall.Syscall6(syscall.SYS_SYNC_FILE_RANGE, fd, uintptr(off), uintptr(n), syncFileRangeWrite, 0, 0)
	})
}
