package launch

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
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
// the phase come from what the surviving ranks say of it. With no such
// rank, the rank the survivors' abort reports say went is the cause, else
// the rank that failed first.
func rootCause(ranks []*localRank) string {
	n := len(ranks)
	var parts []string
	for _, lr := range ranks {
		if lr.died() {
			s := fmt.Sprintf("rank %d %s %.2fs in", lr.rank, lr.how(), lr.ended.Seconds())
			parts = append(parts, s+witnessed(lr.rank, ranks))
		}
	}
	if len(parts) > 0 {
		return fmt.Sprintf("bootstrap --local %d: root cause: %s", n, strings.Join(parts, "; "))
	}
	if d, ok := mostReportedGone(ranks); ok {
		return fmt.Sprintf("bootstrap --local %d: root cause: rank %d went, as the other ranks report%s", n, d, witnessed(d, ranks))
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

// A rank's error names a peer as "rank R (ADDR)" (its listen address) or
// "rank R (peer ADDR)" (the far end of a connection it made); an abort
// report of runtime/transport/tcp says "rank R (ADDR) went in the PHASE,
// step S" (its abort frames: docs/nrtabi-runtime-bootstrap.md#when-a-rank-fails); a ring step that
// failed is "PHASE, step S: ..."; a root names a rank that hung up on it
// "rank R (listening on ADDR, PHASE)"
// (docs/bootstrap-hierarchy.md#a-rank-that-hangs-up-on-its-root).
var (
	goneRe  = regexp.MustCompile(`\brank (\d+) \(([^()\s]+)\) went in the (.+?), step (-?\d+)`)
	hungRe  = regexp.MustCompile(`\brank (\d+) \(listening on ([^,()\s]+), ([^()]+)\) closed its root connection`)
	stepRe  = regexp.MustCompile(`^(.+), step (-?\d+)$`)
	peerFmt = `\brank %d \((peer )?([^()\s]+)\)`
)

// mention is what one rank's error says of another.
type mention struct {
	by     *localRank
	addr   string
	listen bool
	phase  string // "during PHASE", or where its root saw it
}

// mentionsOf are the other ranks' errors naming rank d.
func mentionsOf(d int, ranks []*localRank) []mention {
	named := regexp.MustCompile(fmt.Sprintf(peerFmt, d))
	var out []mention
	for _, lr := range ranks {
		if lr.rank == d {
			continue
		}
		why := lr.why()
		found := false
		for _, m := range goneRe.FindAllStringSubmatch(why, -1) {
			if m[1] == strconv.Itoa(d) {
				out = append(out, mention{by: lr, addr: m[2], listen: true, phase: "during " + m[3] + ", step " + m[4]})
				found = true
				break
			}
		}
		if found {
			continue
		}
		for _, m := range hungRe.FindAllStringSubmatch(why, -1) {
			if m[1] == strconv.Itoa(d) {
				out = append(out, mention{by: lr, addr: m[2], listen: true, phase: m[3] + ", as its root saw it hang up"})
				found = true
				break
			}
		}
		if found {
			continue
		}
		best := -1
		ms := named.FindAllStringSubmatch(why, -1)
		for i, m := range ms {
			if best < 0 || (ms[best][1] != "" && m[1] == "") {
				best = i
			}
		}
		if best >= 0 {
			out = append(out, mention{by: lr, addr: ms[best][2], listen: ms[best][1] == "", phase: "during " + errPhase(why)})
		}
	}
	return out
}

// errPhase is where a rank's error says it failed: the "PHASE, step S"
// part when it has one, else its first part (the init step).
func errPhase(why string) string {
	parts := strings.Split(why, ": ")
	for _, p := range parts {
		if stepRe.MatchString(p) {
			return p
		}
	}
	return parts[0]
}

// witnessed is what the other ranks say of rank d: its address and the
// phase, from the mention with a listen address if one has it, and the
// error of the rank that said so.
func witnessed(d int, ranks []*localRank) string {
	ms := mentionsOf(d, ranks)
	if len(ms) == 0 {
		return "; no other rank names it"
	}
	m := ms[0]
	for _, x := range ms {
		if x.listen {
			m = x
			break
		}
	}
	where := "its address " + esc(m.addr)
	if !m.listen {
		where = "its connection from " + esc(m.addr)
	}
	return fmt.Sprintf(", %s, %s (named by %d other rank(s); rank %d: %s)", where, esc(m.phase), len(ms), m.by.rank, esc(m.by.why()))
}

// mostReportedGone is the rank the most abort reports say went.
func mostReportedGone(ranks []*localRank) (int, bool) {
	count := map[int]int{}
	for _, lr := range ranks {
		for _, m := range goneRe.FindAllStringSubmatch(lr.why(), -1) {
			if d, err := strconv.Atoi(m[1]); err == nil {
				count[d]++
			}
		}
	}
	best, n := -1, 0
	for d, c := range count {
		if c > n || (c == n && d < best) {
			best, n = d, c
		}
	}
	return best, best >= 0
}

// why is a failed rank's own account: its report's error, else the last
// line of its log.
func (lr *localRank) why() string {
	if e := lr.fields["error"]; e != "" {
		return e
	}
	return lastLine(lr.stderr.String())
}
