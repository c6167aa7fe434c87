package hostile

import "math"

// PeerText is free text a forging bootstrap peer sends where the protocol
// carries text (an extended ABORT's reason, the halves of a git-hash tag):
// every one must reach an error or a log escaped
// (docs/libnccom.md#deadlines-and-what-peers-send, docs/bootstrap.md#bounds-and-tests).
type PeerText struct {
	Name string
	Text string
}

// PeerTexts are the texts that once reached the logs raw: terminal escapes,
// a bell, a newline that starts a forged log line, bytes that are not UTF-8,
// and runes a terminal acts on rather than shows.
func PeerTexts() []PeerText {
	return []PeerText{
		{"csi", "\x1b[2J\x1b[31mred"},
		{"osc title", "\x1b]0;owned\x07"},
		{"bel", "ring\x07"},
		{"forged line", "oops\ntime=now level=ERROR msg=\"rank 2 failed\""},
		{"carriage return", "ok\rFAIL"},
		{"invalid utf-8", "\xff\xfe\xc0\x80"},
		{"c1 csi", "\u009b31m"},
		{"bidi override", "\u202egnirts"},
		{"line separator", "a\u2028b"},
		{"nul", "a\x00b"},
	}
}

// PeerRanks are ranks a forged record or hello claims in a world of nranks
// that no rank of it has: each must be reported as out of range, with the
// address it came from, never as a duplicate.
func PeerRanks(nranks int) []int {
	return []int{nranks, nranks + 4, -1, math.MinInt32, math.MaxInt32}
}

// What a hostile bootstrap peer sends to forge log lines
// (docs/libnccom.md#deadlines-and-what-peers-send): bytes
// that, printed raw, end a line, start a forged one, recolour or retitle the
// terminal, or ring its bell. runtime/e2e sends them to the reference
// libnccom; the Go transport's tests can send the same.

// ForgedLine is the line a peer tries to make appear in a log of its own.
const ForgedLine = "libnccom 1 NCCL WARN forged"

// PeerGitHash is an nccl_nrt_git_hash of 8 + 8 bytes (libnccom's, then
// libnrt's) made of control bytes and the start of a forged line.
var PeerGitHash = [2]string{"\nFORGE\x1b\x07", "\x1b]0;x\x07\nFO"}

// PeerGitHashForged are the line starts PeerGitHash would forge.
var PeerGitHashForged = []string{"FORGE", "FO"}

// PeerAbortText is an ABORT's reason that ends the line, recolours the
// terminal, forges ForgedLine and rings the bell.
const PeerAbortText = "evil\n\x1b[31m" + ForgedLine + "\x07\r"

// RawControl reports the first control byte of log other than a line's
// end: what a log that escapes what peers send never holds.
func RawControl(log string) (int, bool) {
	for i := 0; i < len(log); i++ {
		if c := log[i]; (c < 0x20 && c != '\n') || c == 0x7f {
			return i, true
		}
	}
	return 0, false
}
