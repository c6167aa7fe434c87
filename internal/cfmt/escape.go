package cfmt

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// PeerTextMax is the bound Escape callers use for text a peer sends
// (an ABORT's reason, a git-hash half): the wire bound of an extended
// ABORT (abi.BootstrapAbortTextMax), so nothing a peer may legally send is
// cut, and a line of a log stays a line.
const PeerTextMax = 4096

// Escape makes bytes from outside (a peer, a file) safe to put in an error,
// a log line or on a terminal: printable text is kept as it is; control
// bytes become \n, \r, \t or \xNN, bytes that are not UTF-8 become \xNN, and
// other runes a terminal would act on rather than show (bidi overrides,
// zero-width characters, U+2028) become \uNNNN. Only the first max bytes of
// s (PeerTextMax when max < 1) are shown, followed by how many were left off. The result is for
// people, not for parsing back: a backslash is kept as it is, so text that
// already looks like an escape does not grow on every hop of a message that
// is passed on.
func Escape[T ~string | ~[]byte](s T, max int) string {
	if max < 1 {
		max = PeerTextMax
	}
	var cut int
	if len(s) > max {
		cut = len(s) - max
		s = s[:max]
	}
	str := string(s)
	var b strings.Builder
	b.Grow(len(str))
	for i := 0; i < len(str); {
		r, n := utf8.DecodeRuneInString(str[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, str[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == ' ' || unicode.IsPrint(r):
			b.WriteString(str[i : i+n])
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += n
	}
	if cut > 0 {
		fmt.Fprintf(&b, "... (%d more bytes)", cut)
	}
	return b.String()
}
