package main

import (
	"fmt"
	"io"
	"time"
)

// stat is a tool's result over its runs: median wall and CPU time, the
// largest peak RSS, and the largest floor any of its runs had (sample.floor).
type stat struct {
	wall, cpu time.Duration
	maxRSS    int64
	floor     int64
	runs      int
	count     int    // what its output held (structs written or printed), 0 if not counted
	note      string // printed beside its numbers
	na        string // why the tool has no number
	failed    bool   // it ran and failed a judged run (na says how): a miss for nrtabi
	// notWithin is the bound a peer did not finish within: it has no time,
	// and a ratio against it is an upper bound.
	notWithin time.Duration
}

// atFloor: the peak RSS reading is the bench's own carried into the child
// (within floorSlack, what the bench may allocate between reading its
// high-water mark and the exec), so the child's true peak is at most that.
func (s stat) atFloor() bool { return s.maxRSS <= s.floor+floorSlack }

const floorSlack = 2 << 20

// goal is one judged ratio: nrtabi's number over a peer's (or -j 1's
// over -j 2's), its limit, and its verdict. No goal is dropped from the
// report, whatever its verdict.
type goal struct {
	input, what string
	ratio       float64
	limit       float64 // 0: no goal stated, the ratio is printed
	atLeast     bool    // the ratio must be >= limit (a speed-up), else <=
	na          string  // no ratio: why (a peer not installed)
	failed      bool    // nrtabi failed a run: missed, whatever the peer did
	// upper / lower: the ratio is a bound, not a measurement (a peer that
	// did not finish within its bound; a peak RSS at the bench's floor).
	upper, lower bool
	unjudged     string // a ratio, but the goal is not judged: why
	detail       string // printed after an unjudged verdict (the load seen)
	bound        string // printed when missed: what bounds it
}

type verdictKind int

const (
	vMet verdictKind = iota
	vMissed
	vFailed
	vUnjudged
	vNoRatio
	vNoGoal
)

func (g goal) kind() verdictKind {
	switch {
	case g.failed:
		return vFailed
	case g.na != "":
		return vNoRatio
	case g.limit == 0:
		return vNoGoal
	case g.unjudged != "":
		return vUnjudged
	}
	ok := g.ratio <= g.limit
	if g.atLeast {
		ok = g.ratio >= g.limit
	}
	switch {
	case ok && (g.atLeast && g.lower || !g.atLeast && g.upper || !g.upper && !g.lower):
		return vMet // a bound on the right side of the limit proves it
	case !ok && (g.atLeast && g.upper || !g.atLeast && g.lower || !g.upper && !g.lower):
		return vMissed
	}
	return vUnjudged // a bound on the wrong side proves nothing
}

func (g goal) verdict() string {
	switch g.kind() {
	case vFailed:
		return "**FAILED**: " + g.na
	case vNoRatio:
		return "no ratio: " + g.na
	case vNoGoal:
		return "no goal stated"
	case vUnjudged:
		if g.unjudged != "" {
			v := g.unjudged + ": goal not judged"
			if g.detail != "" {
				v += " (" + g.detail + ")"
			}
			return v
		}
		return "a bound on the wrong side of the goal: not judged"
	case vMissed:
		return "**MISSED**"
	}
	if g.upper || g.lower {
		return "met (by a bound)"
	}
	return "met"
}

func (g goal) ratioText() string {
	if g.na != "" {
		return "—"
	}
	switch {
	case g.upper:
		return fmt.Sprintf("< %.3fx", g.ratio)
	case g.lower:
		return fmt.Sprintf("> %.3fx", g.ratio)
	}
	return fmt.Sprintf("%.3fx", g.ratio)
}

func (g goal) limitText() string {
	if g.limit == 0 {
		return "—"
	}
	if g.atLeast {
		return fmt.Sprintf(">= %.2fx", g.limit)
	}
	return fmt.Sprintf("<= %.2fx", g.limit)
}

// wallGoal is a's wall time over b's.
func wallGoal(input, what string, a, b stat, limit float64, bound func() string) goal {
	g := goal{input: input, what: what, limit: limit}
	switch {
	case a.na != "":
		g.na, g.failed = a.na, a.failed
	case b.notWithin > 0:
		// The peer was stopped at its bound: it takes longer, so the ratio
		// is at most a / bound.
		g.ratio, g.upper = float64(a.wall)/float64(b.notWithin), true
	case b.na != "":
		g.na = b.na
	default:
		g.ratio = float64(a.wall) / float64(b.wall)
	}
	if g.kind() == vMissed && bound != nil {
		g.bound = bound()
	}
	return g
}

// rssGoal is a's peak RSS over b's, from the children's rusage. A reading
// at the bench's floor is at most that floor, so the ratio becomes a bound.
func rssGoal(input, what string, a, b stat, limit float64) goal {
	g := goal{input: input, what: what, limit: limit}
	switch {
	case a.na != "":
		g.na, g.failed = a.na, a.failed
		return g
	case b.na != "" && b.notWithin == 0:
		g.na = b.na
		return g
	case b.notWithin > 0:
		g.na = "the peer did not finish: no peak RSS"
		return g
	}
	switch {
	case a.atFloor() && b.atFloor():
		g.ratio = float64(a.maxRSS) / float64(b.maxRSS)
		g.unjudged = fmt.Sprintf("both readings are the bench's own floor (%s)", mibBytes(max(a.floor, b.floor)))
	case a.atFloor():
		g.ratio, g.upper = float64(a.maxRSS)/float64(b.maxRSS), true
	case b.atFloor():
		g.ratio, g.lower = float64(a.maxRSS)/float64(b.maxRSS), true
	default:
		g.ratio = float64(a.maxRSS) / float64(b.maxRSS)
	}
	if g.kind() == vMissed {
		g.bound = fmt.Sprintf("nrtabi peaked at %s against %s", mibBytes(a.maxRSS), mibBytes(b.maxRSS))
	}
	return g
}

// printGoals prints a group's goals, each row with its ratio and verdict.
func printGoals(w io.Writer, goals []goal) {
	if len(goals) == 0 {
		return
	}
	fmt.Fprintln(w, "\n| input | measure | ratio | goal | verdict |")
	fmt.Fprintln(w, "|---|---|---:|---:|---|")
	for _, g := range goals {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", g.input, g.what, g.ratioText(), g.limitText(), g.verdict())
	}
}

// summarise prints how many goals were met, missed, failed and left
// unjudged, and lists every one that was not met with what bounds it.
func summarise(w io.Writer, goals []goal) {
	var n [vNoGoal + 1]int
	for _, g := range goals {
		n[g.kind()]++
	}
	fmt.Fprintf(w, "\n## Goals\n\n%d goals: %d met, %d missed, %d failed, %d not judged, %d without a ratio, %d without a stated goal\n",
		len(goals), n[vMet], n[vMissed], n[vFailed], n[vUnjudged], n[vNoRatio], n[vNoGoal])
	for _, g := range goals {
		switch g.kind() {
		case vMissed:
			fmt.Fprintf(w, "- MISSED: %s, %s: %s (goal %s)", g.input, g.what, g.ratioText(), g.limitText())
			if g.bound != "" {
				fmt.Fprintf(w, "; %s", g.bound)
			}
			fmt.Fprintln(w)
		case vFailed:
			fmt.Fprintf(w, "- FAILED: %s, %s: %s\n", g.input, g.what, g.na)
		case vUnjudged:
			fmt.Fprintf(w, "- not judged: %s, %s: %s, %s\n", g.input, g.what, g.ratioText(), g.verdict())
		}
	}
}
