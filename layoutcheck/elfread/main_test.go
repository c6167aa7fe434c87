package elfread

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	// Debian's debuginfod package sets DEBUGINFOD_URLS for login shells; the
	// tests never download from a server they did not start.
	os.Unsetenv("DEBUGINFOD_URLS")
	os.Exit(m.Run())
}
