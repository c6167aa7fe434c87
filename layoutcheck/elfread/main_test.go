package elfread

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	// Debian's debuginfod package sets DEBUGINFOD_URLS for login shells; the
	// tests never download from a server they did not start.
	os.Unsetenv("DEBUGINFOD_URLS")
	// A proxy from the environment would be asked for the loopback
	// servers the tests start (curl's rule, which the client follows).
	for _, v := range ProxyVariables {
		os.Unsetenv(v)
	}
	os.Exit(m.Run())
}
