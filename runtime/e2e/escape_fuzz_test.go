package e2e

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/hostile"
)

// The reference libnccom's escaper (nccom_escape, runtime/libnccom/log.c)
// run in a C process (escapecheck.c, with ASan/UBSan when the compiler has
// them) that answers one record at a time, so a fuzz target reaches it at
// pipe speed.
var escaperDriver = &cDriver{name: "escapecheck", libnccom: []string{"log.c"}, stderr: os.Stderr}

// cEscape is nccom_escape(data, len, buf, capacity) as the C library runs it.
func cEscape(t testing.TB, data []byte, capacity uint32) string {
	rec := binary.LittleEndian.AppendUint32(nil, capacity)
	rec = binary.LittleEndian.AppendUint32(rec, uint32(len(data)))
	var out []byte
	escaperDriver.call(t, append(rec, data...), func(r *bufio.Reader) error {
		var n [4]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return err
		}
		out = make([]byte, binary.LittleEndian.Uint32(n[:]))
		_, err := io.ReadFull(r, out)
		return err
	})
	return string(out)
}

// refEscape is the escaper's contract: printable ASCII kept, every other
// byte as \xHH, at most capacity-1 characters, a cut marked "...".
func refEscape(data []byte, capacity int) string {
	var b strings.Builder
	if capacity == 0 {
		return ""
	}
	for i, c := range data {
		piece := string(rune(c))
		if c < 0x20 || c >= 0x7f {
			piece = fmt.Sprintf(`\x%02x`, c)
		}
		more := 0
		if i+1 < len(data) {
			more = 3
		}
		if b.Len()+len(piece)+more >= capacity {
			if b.Len()+3 < capacity {
				b.WriteString("...")
			}
			break
		}
		b.WriteString(piece)
	}
	return b.String()
}

// FuzzCEscape holds the C escaper to its contract for any bytes and any
// buffer: no control byte out, never more than the buffer, everything shown
// when it fits, and no memory error under ASan/UBSan.
func FuzzCEscape(f *testing.F) {
	f.Add([]byte(hostile.PeerAbortText), uint16(512))
	f.Add([]byte(hostile.PeerGitHash[0]), uint16(33))
	f.Add([]byte("\x00\xff\\x1b\""), uint16(4))
	f.Add([]byte("abc"), uint16(0))
	f.Add([]byte("abcdef"), uint16(5))
	f.Fuzz(func(t *testing.T, data []byte, c uint16) {
		capacity := uint32(c % 4096)
		got := cEscape(t, data, capacity)
		if i, bad := hostile.RawControl(got); bad || strings.ContainsRune(got, '\n') {
			t.Fatalf("escaped %q holds a control byte at %d: %q", data, i, got)
		}
		if capacity > 0 && uint32(len(got)) >= capacity || capacity == 0 && got != "" {
			t.Fatalf("%d bytes out of a %d-byte buffer", len(got), capacity)
		}
		if want := refEscape(data, int(capacity)); got != want {
			t.Fatalf("nccom_escape(%q, cap %d) = %q, want %q", data, capacity, got, want)
		}
	})
}

// TestCEscapeWhole: an escape that fits is the whole text.
func TestCEscapeWhole(t *testing.T) {
	in := []byte(hostile.PeerAbortText)
	got := cEscape(t, in, 4*uint32(len(in))+1)
	if want := `evil\x0a\x1b[31mlibnccom 1 NCCL WARN forged\x07\x0d`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
