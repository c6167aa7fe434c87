package cfmt

import (
	"fmt"

	"github.com/nrtabi/nrtabi/internal/esc"
)

// PeerTextMax is the bound Escape callers use for text a peer sends
// (an ABORT's reason, a git-hash half): the wire bound of an extended
// ABORT (abi.BootstrapAbortTextMax), so nothing a peer may legally send is
// cut, and a line of a log stays a line.
const PeerTextMax = 4096

// Escape is esc.Text (the one escaping of bytes from outside: see package
// esc) over at most the first max bytes of s (PeerTextMax when max < 1),
// followed by how many were left off, so a peer cannot fill a log line.
func Escape[T ~string | ~[]byte](s T, max int) string {
	if max < 1 {
		max = PeerTextMax
	}
	if len(s) <= max {
		return esc.Text(string(s))
	}
	return fmt.Sprintf("%s... (%d more bytes)", esc.Text(string(s[:max])), len(s)-max)
}
