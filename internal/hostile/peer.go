package hostile

// What a hostile bootstrap peer sends to forge log lines (issue 22): bytes
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
