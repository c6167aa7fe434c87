package main

import (
	"debug/elf"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

func report(w io.Writer, runs int, floors []floor, results []result) {
	load1, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(w, "\nnrtabi show / nrtabi check --require / pahole -C (dwarves), the same structs of the same file;\n")
	fmt.Fprintf(w, "whole processes, interleaved, median wall of %d runs, largest peak RSS (wait4 in csrc/measure.c); %s; %s, %d CPUs; load average %s\n\n",
		runs, time.Now().UTC().Format("2006-01-02 15:04 UTC"), cpuModel(), runtime.NumCPU(), strings.Join(strings.Fields(string(load1))[:3], " "))
	fmt.Fprintln(w, "| input | structs asked | .debug_info | show | check | pahole | show / pahole | check / pahole | empty Go / pahole | show RSS | check RSS | pahole RSS | check RSS / pahole |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	var verdicts []string
	met, rated := 0, 0
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
		shR, ckR, rssR := ratio(sh.wall, ph.wall, sh.na), ratio(ck.wall, ph.wall, ""), ratio(time.Duration(ck.maxRSS), time.Duration(ph.maxRSS), "")
		floorR := ratio(empty.wall, ph.wall, "")
		if ph.na != "" {
			na := "no ratio: " + ph.na
			shR, ckR, floorR, rssR = na, na, "—", "—"
		} else if r.noAnswer != "" {
			// pahole ran and was timed, but found nothing: no ratio.
			na := "no answer from pahole (`" + r.noAnswer + "`)"
			shR, ckR, rssR = na, na, "—"
		} else {
			rated++
			worst := max(ck.wall, sh.wall)
			switch {
			case worst <= ph.wall:
				met++
			case empty.wall >= ph.wall:
				verdicts = append(verdicts, fmt.Sprintf("- %s, %s: %.2fx (nrtabi %s, pahole %s); an empty Go program alone takes %s, so no Go program meets the goal here", r.label, asked, float64(worst)/float64(ph.wall), msd(worst), ms(ph), ms(empty)))
			default:
				verdicts = append(verdicts, fmt.Sprintf("- %s, %s: %.2fx (nrtabi %s, pahole %s); an empty Go program takes %s, so %s is nrtabi's own start and work", r.label, asked, float64(worst)/float64(ph.wall), msd(worst), ms(ph), ms(empty), msd(worst-empty.wall)))
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.label, asked, sectionSize(r.dwarf), ms(sh), ms(ck), ms(ph), shR, ckR, floorR,
			mib(sh), mib(ck), mib(ph), rssR)
	}
	fmt.Fprintf(w, "\nfloors (median wall of %d runs, largest peak RSS):\n\n", runs)
	fmt.Fprintln(w, "| process | wall | peak RSS |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, f := range floors {
		fmt.Fprintf(w, "| %s | %s | %s |\n", f.what, ms(f.stat), mib(f.stat))
	}
	fmt.Fprintln(w, "\ngoal: wall ratio <= 1.00x on every row; peak RSS <= pahole's except by the Go runtime's floor")
	fmt.Fprintf(w, "wall goal met on %d of the %d rows pahole answers", met, rated)
	if len(verdicts) == 0 {
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintln(w, "; missed on:")
	for _, v := range verdicts {
		fmt.Fprintln(w, v)
	}
}

func msd(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

func ms(s stat) string {
	if s.na != "" {
		return "—"
	}
	return fmt.Sprintf("%.1f ms", float64(s.wall)/float64(time.Millisecond))
}

func mib(s stat) string {
	if s.na != "" {
		return "—"
	}
	return fmt.Sprintf("%.1f MiB", float64(s.maxRSS)/(1<<20))
}

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
