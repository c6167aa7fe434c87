package tcp

import (
	"net"
	"testing"
)

// loopbackListener listens on a free loopback port (the only address the
// tests may use) and closes the listener when the test ends.
func loopbackListener(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}
