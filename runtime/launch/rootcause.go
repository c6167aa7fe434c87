package launch

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// rootCause is the first line of a failed --local world: the rank whose
// failure the others' follow from, so the reader does not have to find it
// among N lines that each blame a neighbour
// (docs/nrtabi-runtime-bootstrap.md#when-a-rank-fails).
//
// A rank process that ended without its report — a signal the launcher
// did not send, or an exit with no report line — is the cause: it cannot
// have been told of another's failure by the protocol. Its address and
// the phase come from what the surviving ranks say of it (a rank's error
// names a peer as "rank R (peer ADDR)" or "rank R (ADDR)"). With no such
// rank, the cause is the rank that failed first.
func rootCause(ranks []*localRank) string {
	n := len(ranks)
	var dead []*localRank
	for _, lr := range ranks {
		if lr.died() {
			dead = append(dead, lr)
		}
	}
	if len(dead) > 0 {
		var parts []string
		for _, d := range dead {
			parts = append(parts, deadRank(d, ranks))
		}
		return fmt.Sprintf("bootstrap --local %d: root cause: %s", n, strings.Join(parts, "; "))
	}
	var failed []*localRank
	for _, lr := range ranks {
		if lr.exit != 0 && !lr.stopped {
			failed = append(failed, lr)
		}
	}
	if len(failed) == 0 {
		return ""
	}
	sort.SliceStable(failed, func(i, j int) bool { return failed[i].ended < failed[j].ended })
	f := failed[0]
	return fmt.Sprintf("bootstrap --local %d: root cause: rank %d failed first (%s %.2fs in): %s", n, f.rank, f.how(), f.ended.Seconds(), esc(f.why()))
}

// deadRank describes a rank that died: how, and where and when as the
// first survivor that names it saw it.
func deadRank(d *localRank, ranks []*localRank) string {
	s := fmt.Sprintf("rank %d %s %.2fs in", d.rank, d.how(), d.ended.Seconds())
	// "rank D (ADDR)" names its listen address, "rank D (peer ADDR)" the
	// far end of a connection it made; the first is preferred.
	named := regexp.MustCompile(fmt.Sprintf(`\brank %d \((peer )?([^()\s]+)\)`, d.rank))
	witnesses := 0
	var first *localRank
	var addr, kind string
	for _, lr := range ranks {
		if lr == d {
			continue
		}
		ms := named.FindAllStringSubmatch(lr.why(), -1)
		if ms == nil {
			continue
		}
		witnesses++
		for _, m := range ms {
			if first == nil || (kind != "listen" && m[1] == "") {
				first, addr, kind = lr, m[2], "listen"
				if m[1] != "" {
					kind = "connection"
				}
			}
		}
	}
	if first == nil {
		return s + "; no other rank names it"
	}
	where := "its address " + esc(addr)
	if kind == "connection" {
		where = "its connection from " + esc(addr)
	}
	phase, _, _ := strings.Cut(first.why(), ": ")
	return fmt.Sprintf("%s, %s, during %s (named by %d other rank(s); rank %d: %s)",
		s, where, esc(phase), witnesses, first.rank, esc(first.why()))
}

// why is a failed rank's own account: its report's error, else the last
// line of its log.
func (lr *localRank) why() string {
	if e := lr.fields["error"]; e != "" {
		return e
	}
	return lastLine(lr.stderr.String())
}
