package main

import (
	"debug/elf"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// report prints the show/check rows: each against pahole -C on the same
// structs of the same file, goal <= 1x pahole's wall, with a verdict per
// row and the rows that miss listed with what the Go runtime's floor
// accounts for.
func report(w io.Writer, runs int, results []result) []goal {
	fmt.Fprintf(w, "nrtabi show / nrtabi check --require / pahole -C (dwarves), the same structs of the same file; whole processes, interleaved, median wall of %d runs, every run judged, largest peak RSS from the children's rusage; %s\n\n", runs, cpuModel())
	fmt.Fprintln(w, "| input | structs asked | .debug_info | show | check | pahole | show / pahole | check / pahole | empty Go / pahole | show RSS | check RSS | pahole RSS | goal: wall <= 1.00x pahole's |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	var verdicts []string
	var goals []goal
	for _, res := range results {
		r := res.row
		sh, ck, ph, empty := res.stats[0], res.stats[1], res.stats[2], res.stats[3]
		asked := strings.Join(r.asked, ", ")
		if len(r.asked) > 3 {
			asked = fmt.Sprintf("%d structs", len(r.asked))
		}
		if r.absent {
			asked += " (absent: full scan)"
		}
		if r.extra > 0 {
			asked += fmt.Sprintf(" (+%d named by its members, check only)", r.extra)
		}
		shR, ckR := ratio(sh.wall, ph.wall, sh.na), ratio(ck.wall, ph.wall, "")
		floorR := ratio(empty.wall, ph.wall, "")
		verdict := ""
		worst := max(ck.wall, sh.wall)
		g := goal{input: r.label, what: "wall: the slower of show and check / pahole -C (" + asked + ")", limit: 1, ratio: float64(worst) / float64(ph.wall)}
		switch {
		case ph.na != "":
			g.na = ph.na
			shR, ckR, floorR, verdict = "—", "—", "—", "no ratio: "+ph.na
		case r.noAnswer != "":
			// pahole ran and was timed, but found nothing: no ratio.
			g.na = "no answer from pahole (`" + r.noAnswer + "`)"
			shR, ckR, verdict = "—", "—", g.na
		default:
			verdict = g.verdict()
			switch {
			case g.kind() == vMet:
			case empty.wall >= ph.wall:
				verdicts = append(verdicts, fmt.Sprintf("- %s, %s: %.2fx (nrtabi %s, pahole %s); an empty Go program alone takes %s, so no Go program meets the goal here", r.label, asked, g.ratio, msd(worst), ms(ph), ms(empty)))
			default:
				verdicts = append(verdicts, fmt.Sprintf("- %s, %s: %.2fx (nrtabi %s, pahole %s); an empty Go program takes %s, so %s is nrtabi's own start and work", r.label, asked, g.ratio, msd(worst), ms(ph), ms(empty), msd(worst-empty.wall)))
			}
		}
		goals = append(goals, g)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.label, asked, sectionSize(r.dwarf), ms(sh), ms(ck), ms(ph), shR, ckR, floorR,
			rssText(sh), rssText(ck), rssText(ph), verdict)
	}
	if len(verdicts) > 0 {
		fmt.Fprintln(w, "\nmissed:")
		for _, v := range verdicts {
			fmt.Fprintln(w, v)
		}
	}
	return goals
}

func msd(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

func ms(s stat) string {
	if s.na != "" {
		return "—"
	}
	return msd(s.wall)
}

func mibBytes(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func ratio(a, b time.Duration, na string) string {
	if na != "" || b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2fx", float64(a)/float64(b))
}

// sectionSize is .debug_info's size, and its compressed size when it is.
func sectionSize(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return "?"
	}
	defer f.Close()
	s := f.Section(".debug_info")
	if s == nil {
		s = f.Section(".debug_info.dwo")
	}
	if s == nil {
		return "?"
	}
	if s.Flags&elf.SHF_COMPRESSED != 0 {
		return size(s.Size) + " (zlib " + size(s.FileSize) + ")"
	}
	return size(s.Size)
}

func size(n uint64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
