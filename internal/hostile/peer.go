package hostile

import "math"

// PeerText is free text a forging bootstrap peer sends where the protocol
// carries text (an extended ABORT's reason, the halves of a git-hash tag):
// every one must reach an error or a log escaped (issue 22).
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
