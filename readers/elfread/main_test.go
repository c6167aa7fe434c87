package elfread

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	// Debian's debuginfod package sets DEBUGINFOD_URLS for login shells; the
	// tests never download from a server they did not start.
	os.Unsetenv("DEBUGINFOD_URLS")
	rc := m.Run()
	if multiDir != "" {
		os.RemoveAll(multiDir) // scanall_test.go's object, built once
	}
	if tuFix.dir != "" {
		os.RemoveAll(tuFix.dir) // typeunits_test.go's fixtures, built once
	}
	os.Exit(rc)
}
