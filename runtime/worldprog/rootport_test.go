package worldprog

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRootPortOutsideEphemeralRange: the root's port is one no socket of a
// rank can be given (docs/bootstrap.md#the-roots-port): below the kernel's
// ephemeral range, bindable, and never given twice by one process.
func TestRootPortOutsideEphemeralRange(t *testing.T) {
	lo, err := ephemeralLow()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range 50 {
		id, err := FreeLoopbackRoot()
		if err != nil {
			t.Fatal(err)
		}
		_, ps, err := net.SplitHostPort(id)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := strconv.Atoi(ps)
		if p < lowestRootPort || p >= lo {
			t.Fatalf("root %s: port outside %d..%d, inside the ephemeral range", id, lowestRootPort, lo-1)
		}
		if seen[id] {
			t.Fatalf("root %s given twice", id)
		}
		seen[id] = true
		ln, err := net.Listen("tcp", id)
		if err != nil {
			t.Fatalf("root %s does not bind: %v", id, err)
		}
		ln.Close()
	}
}

// TestRootPortRefusals: a range that leaves no room below it, and a range
// file that is not two ports, are refused by name.
func TestRootPortRefusals(t *testing.T) {
	saved := portRangeFile
	t.Cleanup(func() { portRangeFile = saved })
	dir := t.TempDir()
	for _, c := range []struct{ text, want string }{
		{"1024 65535\n", "no loopback port below them"},
		{"10200\t60999\n", "no loopback port below them"},
		{"32768\n", "is not two ports"},
		{"x 60999\n", "is not a port"},
	} {
		portRangeFile = filepath.Join(dir, "range")
		if err := os.WriteFile(portRangeFile, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := FreeLoopbackRoot()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), portRangeFile) {
			t.Errorf("range %q: %v, want an error naming %s and saying %q", c.text, err, portRangeFile, c.want)
		}
	}
}
