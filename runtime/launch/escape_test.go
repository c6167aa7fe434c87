package launch

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestJudgeEscapesRankText: the summary quotes what each rank printed (its
// report line's error, its last stderr line, the fields it agreed on); a
// rank's error can hold a peer's words, so the summary shows them escaped.
func TestJudgeEscapesRankText(t *testing.T) {
	failed := []*localRank{
		{rank: 0, exit: 1, fields: map[string]string{"error": "bootstrap aborted: \x1b[2J\x07\nrank 1: forged"}},
		{rank: 1, exit: 1, fields: map[string]string{}},
	}
	failed[1].stderr.WriteString("first\nlast \x1b]0;title\x07 \xff\n")
	disagree := []*localRank{
		{rank: 0, fields: map[string]string{"rank": "0", "prev": "1", "next": "1", "cluster_id": "1", "unique_id": "u", "verdict": "ok", "nranks": "2"}},
		{rank: 1, fields: map[string]string{"rank": "1", "prev": "0", "next": "0", "cluster_id": "\x1b[31m2", "unique_id": "u\r", "verdict": "ok", "nranks": "2"}},
	}
	for _, ranks := range [][]*localRank{failed, disagree} {
		s := judge(ranks, Options{})
		for _, line := range strings.Split(s.text, "\n") {
			for i, r := range line {
				if r < 0x20 || r == 0x7f || r == utf8.RuneError {
					t.Errorf("a raw byte %q at %d of %q", line[i], i, line)
					break
				}
			}
		}
	}
}
