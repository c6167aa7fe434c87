package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
)

// library is one whole-library input.
type library struct {
	label string
	file  string
}

// cRows: extract --all -j 2 against pahole -j2, which emits the same
// structs on C: wall <= 0.5x, peak RSS <= pahole's.
func cRows(ctx context.Context, w io.Writer, o options, nrtabi string, libs []library) ([]goal, error) {
	fmt.Fprintf(w, "nrtabi extract --all -j 2 against pahole -j2 on C inputs, whole processes, interleaved A B A B, median of %d runs, every run's output judged and counted, peak RSS from each child's rusage (wait4).\n\n", o.runs)
	fmt.Fprintln(w, toolHeader)
	var goals []goal
	for _, l := range libs {
		res, err := measureTools(ctx, o, l.label, l.file, []xTool{extractTool(nrtabi, l.file, 2), paholeTool(l.file)})
		if err != nil {
			return nil, err
		}
		printTools(w, res)
		ex, ph := res.stats[0], res.stats[1]
		goals = append(goals,
			wallGoal(l.label, "wall: extract --all -j 2 / pahole -j2", ex, ph, 0.5, func() string {
				return fmt.Sprintf("extract used %s of CPU in %s, pahole %s in %s; %d structs against %d", msd(ex.cpu), msd(ex.wall), msd(ph.cpu), msd(ph.wall), ex.count, ph.count)
			}),
			rssGoal(l.label, "peak RSS: extract --all -j 2 / pahole -j2", ex, ph, 1))
	}
	printGoals(w, goals)
	return goals, nil
}

// cxxRows: on C++, where pahole 1.24 emits only a few structs, extract
// --all -j 2 against abidw (--load-all-types where it finishes within
// -abidw-bound): wall <= 0.05x; pahole's row kept beside it with its
// count, and peak RSS against pahole's.
func cxxRows(ctx context.Context, w io.Writer, o options, nrtabi string, libs []library) ([]goal, error) {
	fmt.Fprintf(w, "nrtabi extract --all -j 2 against abidw on C++ inputs (`abidw --load-all-types`, the work of extract --all; plain `abidw`, the types its exported symbols reach, where that does not finish within %s; one bounded trial run first, judged; a peer whose trial took over -slow %s is timed from it alone), with pahole -j2 beside it: whole processes, interleaved, median of %d runs.\n\n", o.abidwBound, o.slow, o.runs)
	fmt.Fprintln(w, toolHeader)
	var goals []goal
	for _, l := range libs {
		ab := abidwTool(ctx, o, l.file)
		res, err := measureTools(ctx, o, l.label, l.file, []xTool{extractTool(nrtabi, l.file, 2), ab, paholeTool(l.file)})
		if err != nil {
			return nil, err
		}
		printTools(w, res)
		ex, abs, ph := res.stats[0], res.stats[1], res.stats[2]
		ag := abidwGoal(l.label, ab.name, ex, abs)
		goals = append(goals, ag,
			wallGoal(l.label, fmt.Sprintf("wall: extract --all -j 2 / pahole -j2 (pahole printed %d structs, extract wrote %d)", ph.count, ex.count), ex, ph, 0, nil),
			rssGoal(l.label, "peak RSS: extract --all -j 2 / pahole -j2", ex, ph, 1))
	}
	printGoals(w, goals)
	return goals, nil
}

// speedupRows: extract --all -j 2 against -j 1 of the same binary, goal
// >= 1.7x, judged only when the machine was idle before the row (the
// 1-minute load average under the rule's limit, held for its sustain);
// otherwise the row is printed with the load and left unjudged.
func speedupRows(ctx context.Context, w io.Writer, o options, nrtabi string, libs []library) ([]goal, error) {
	slog.Info("waiting for an idle machine", "below", o.idle.below, "sustain", o.idle.sustain, "bound", o.idle.bound)
	idle := waitIdle(ctx, o.idle, load1)
	fmt.Fprintf(w, "nrtabi extract --all -j 2 against -j 1, interleaved, median of %d runs; both must write the same bytes. Before the row the bench waited for the 1-minute load average to stay under %.2f for %s (at most %s): ", o.runs, o.idle.below, o.idle.sustain, o.idle.bound)
	unjudged, detail := "", ""
	if idle.idle {
		fmt.Fprintf(w, "idle after %.0f s (the 1-minute load at most %.2f over the last %s).\n\n", idle.waited.Seconds(), idle.maxLoad, o.idle.sustain)
	} else {
		unjudged = "not idle"
		detail = fmt.Sprintf("1-minute load %.2f when the wait of %.0f s ended, at most %.2f", idle.last, idle.waited.Seconds(), idle.maxLoad)
		if idle.hopeless {
			detail = fmt.Sprintf("1-minute load %.2f after %.0f s: even with nothing running it could not fall under %.2f and stay there %s within the %s bound, so the wait stopped", idle.last, idle.waited.Seconds(), o.idle.below, o.idle.sustain, o.idle.bound)
		}
		fmt.Fprintf(w, "the machine never became idle: %s.\n\n", detail)
	}
	fmt.Fprintln(w, toolHeader)
	var goals []goal
	for _, l := range libs {
		res, err := measureTools(ctx, o, l.label, l.file, []xTool{extractTool(nrtabi, l.file, 2), extractTool(nrtabi, l.file, 1)})
		if err != nil {
			return nil, err
		}
		printTools(w, res)
		j2, j1 := res.stats[0], res.stats[1]
		g := goal{input: l.label, what: "speed-up: extract -j 1 wall / -j 2 wall", limit: 1.7, atLeast: true, unjudged: unjudged, detail: detail}
		switch {
		case j2.na != "":
			g.na, g.failed = j2.na, j2.failed
		case j1.na != "":
			g.na, g.failed = j1.na, j1.failed
		case res.sums[0] != res.sums[1]:
			g.na, g.failed = "-j 1 and -j 2 wrote different bytes", true
		default:
			g.ratio = float64(j1.wall) / float64(j2.wall)
		}
		if g.kind() == vMissed {
			// Amdahl on 2 cores: S = 1 / (f + (1-f)/2), so f = 2/S - 1.
			g.bound = fmt.Sprintf("a serial fraction of %.0f%% by Amdahl (2/S - 1); CPU %s at -j 1, %s at -j 2", 100*(2/g.ratio-1), msd(j1.cpu), msd(j2.cpu))
		}
		goals = append(goals, g)
	}
	printGoals(w, goals)
	return goals, nil
}

// abidwGoal is extract's wall over abidw's, goal <= 0.05x. A peer
// stopped at a bound decides the goal only when the bound is at least
// extract's wall over the goal; otherwise the row says how long a bound
// would.
func abidwGoal(label, peer string, ex, abs stat) goal {
	g := wallGoal(label, "wall: extract --all -j 2 / "+peer, ex, abs, 0.05, func() string {
		return fmt.Sprintf("extract %s (%s CPU) against %s; %d structs against abidw's %d definitions", msd(ex.wall), msd(ex.cpu), msd(abs.wall), ex.count, abs.count)
	})
	if g.upper && g.kind() == vUnjudged {
		g.unjudged = "abidw was stopped too early to decide"
		g.detail = fmt.Sprintf("deciding needs -abidw-bound of at least %.0f s, extract's wall over the goal", ex.wall.Seconds()/g.limit)
	}
	return g
}
