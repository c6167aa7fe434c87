package inputs

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzMemberOpen: a member read in memory (an archive's, 28P) goes through
// Input.Open to elfread.NewFile; whatever its bytes, the result is a File
// or one error line naming the member, never a panic.
func FuzzMemberOpen(f *testing.F) {
	f.Add([]byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte("!<arch>\ndebian-binary   "))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		in := Input{Name: "pkg.deb!/usr/lib/libx.so\n", Mem: bytes.NewReader(b)}
		o, err := in.Open()
		if err == nil {
			o.Close()
			return
		}
		if msg := err.Error(); !strings.HasPrefix(msg, in.Name) || strings.Contains(msg[len(in.Name):], "\n") {
			t.Fatalf("error %q: want one line after the member's name", msg)
		}
	})
}
