package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nrtabi/nrtabi/bench/bootsim"
)

// The plot is hand-written SVG (no dependency): time to agreement against
// N, both on log scales; measured medians as markers, the simulator as
// lines (solid: this host's fitted costs up to the largest measured N;
// dashed: the target's shape, a core per rank, staggered connects, to
// 100k), the published anchors as black diamonds.

const (
	plotW, plotH         = 880, 540
	padL, padR, padT, pB = 80, 240, 40, 60
)

// colors are by design (the measured rows of a design share its color).
var colors = map[string]string{
	"star": "#1f77b4", "flat": "#d62728", "flat-bidi": "#ff7f0e", "hier": "#2ca02c", "hier-bidi": "#17becf",
	"mroot": "#9467bd", "mroot-bidi": "#e377c2",
}

type series struct {
	color  string
	label  string
	pts    [][2]float64 // N, seconds
	dashed bool
	marker string // "" for a line; "circle" or "square" for points
}

// designOf is the design a measured variant runs: hier-go-bidi -> hier-bidi.
func designOf(variant string) string {
	d := strings.Replace(strings.Replace(variant, "-go", "", 1), "-c", "", 1)
	return d
}

// plotSeries gathers what the plot shows: the measured medians of the
// fitted file and the simulator's curves on its Go costs.
func plotSeries(policy string, f *bootsim.Fitted) ([]series, error) {
	var out []series
	names, by := measuredSeries(f)
	maxN := 8
	for _, name := range names {
		rs := by[name]
		m := "circle"
		if rs[0].Lang == "c" {
			m = "square"
		}
		s := series{color: colors[designOf(name)], label: name + " measured", marker: m}
		for _, r := range rs {
			s.pts = append(s.pts, [2]float64{float64(r.N), r.BootMs / 1000})
			maxN = max(maxN, r.N)
		}
		out = append(out, s)
	}
	cores, err := strconv.Atoi(f.NProc)
	if err != nil || cores < 1 {
		return nil, fmt.Errorf("nproc %q is not a CPU count", f.NProc)
	}
	scale := scaleParams(f.Go, float64(cores))
	scale.Stagger = ncclStagger
	for _, d := range designs {
		if d.name == "flat-bidi" || d.name == "mroot" {
			continue // the plot keeps to the shapes that bound the others
		}
		host := series{color: colors[d.name], label: d.name + " sim, this host's cores"}
		past := series{color: colors[d.name], label: d.name + " sim, past one host (a core per rank), staggered", dashed: true}
		for e := math.Log10(8); e <= 5.0001; e += 0.05 {
			n := int(math.Round(math.Pow(10, e)))
			if n <= maxN && !d.multi {
				r, _, err := predict(d, policy, n, f.Go)
				if err != nil {
					return nil, err
				}
				host.pts = append(host.pts, [2]float64{float64(n), r.Seconds})
			}
			if n >= maxN {
				r, _, err := predict(d, policy, n, scale)
				if err != nil {
					return nil, err
				}
				past.pts = append(past.pts, [2]float64{float64(n), r.Seconds})
			}
		}
		if len(host.pts) > 0 {
			out = append(out, host)
		}
		out = append(out, past)
	}
	return out, nil
}

// renderPlot is the SVG text of the series.
func renderPlot(title string, ss []series) string {
	minY, maxY := math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for _, p := range s.pts {
			if p[1] > 0 {
				minY, maxY = min(minY, p[1]), max(maxY, p[1])
			}
		}
	}
	if math.IsInf(minY, 0) {
		minY, maxY = 1e-3, 1
	}
	maxY = max(maxY, usersReportSeconds) // the users' report is always on the plot
	y0, y1 := math.Floor(math.Log10(minY)), math.Ceil(math.Log10(maxY))
	if y1 <= y0 {
		y1 = y0 + 1
	}
	x0, x1 := math.Log10(8), 5.0
	px := func(n float64) float64 { return padL + (math.Log10(n)-x0)/(x1-x0)*(plotW-padL-padR) }
	py := func(t float64) float64 { return plotH - pB - (math.Log10(t)-y0)/(y1-y0)*(plotH-padT-pB) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", plotW, plotH, plotW, plotH)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", plotW, plotH)
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="15">%s</text>`+"\n", padL, xmlText(title))
	// grid and ticks
	for e := math.Ceil(x0); e <= x1; e++ {
		x := px(math.Pow(10, e))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", x, padT, x, plotH-pB)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x, plotH-pB+18, humanN(math.Pow(10, e)))
	}
	for e := y0; e <= y1; e++ {
		y := py(math.Pow(10, e))
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", padL, y, plotW-padR, y)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", padL-6, y+4, humanS(math.Pow(10, e)))
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n", padL, padT, plotW-padL-padR, plotH-padT-pB)
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">ranks N (log scale)</text>`+"\n", padL+(plotW-padL-padR)/2, plotH-18)
	fmt.Fprintf(&b, `<text x="18" y="%d" transform="rotate(-90 18 %d)" text-anchor="middle">time to agreement (log scale)</text>`+"\n", padT+(plotH-padT-pB)/2, padT+(plotH-padT-pB)/2)
	// series, then the legend
	for i, s := range ss {
		c := s.color
		if s.marker == "" {
			var pts []string
			for _, p := range s.pts {
				if p[1] > 0 {
					pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(p[0]), py(p[1])))
				}
			}
			dash := ""
			if s.dashed {
				dash = ` stroke-dasharray="6 4"`
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.8"%s points="%s"/>`+"\n", c, dash, strings.Join(pts, " "))
		} else {
			for _, p := range s.pts {
				if p[1] > 0 {
					b.WriteString(marker(s.marker, px(p[0]), py(p[1]), c) + "\n")
				}
			}
		}
		ly := float64(padT + 14 + 18*i)
		lx := float64(plotW - padR + 12)
		if s.marker == "" {
			dash := ""
			if s.dashed {
				dash = ` stroke-dasharray="6 4"`
			}
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.8"%s/>`+"\n", lx, ly-4, lx+22, ly-4, c, dash)
		} else {
			b.WriteString(marker(s.marker, lx+11, ly-4, c) + "\n")
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11">%s</text>`+"\n", lx+28, ly, xmlText(s.label))
	}
	// the published anchors (docs/sources.md#ref-scale), as black diamonds
	for _, a := range plotAnchors {
		x, y := px(a.n), py(a.s)
		fmt.Fprintf(&b, `<path d="M %.1f %.1f l 5 5 l -5 5 l -5 -5 z" fill="black"/>`+"\n", x, y-5)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="10" text-anchor="end">%s</text>`+"\n", x-8, y+4, xmlText(a.label))
	}
	// the users' report (docs/sources.md#ref-scale-users): no N was given,
	// so a dotted line across the plot at 150 s, labelled as what it is
	if y := py(usersReportSeconds); y >= padT && y <= plotH-pB {
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#555" stroke-width="1" stroke-dasharray="2 3"/>`+"\n", padL, y, plotW-padR, y)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="10" fill="#555">%s</text>`+"\n", padL+4, y-4, xmlText("users' report, no public source: 2.5-min inits on every restart (no N given)"))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// usersReportSeconds is the users' 2.5-minute init (not a published
// figure: docs/sources.md#ref-scale-users).
const usersReportSeconds = 150

// plotAnchors are the published points the plot marks (docs/sources.md#ref-scale).
var plotAnchors = []struct {
	n, s  float64
	label string
}{
	{100000, 30, "NCCL goal: < 30 s at 100k"},
	{96000, 100, "PyTorch TCPStore (libuv): ~100 s at 96k"},
	{96000, 265, "stock NCCL: ~265 s at 96k (secondary)"},
	{100000, 5, "this bench's goal: 5 s at 100k"},
	{8, 1.6, "NCCL 2.22.3 bootstrap: 1.6 s at 8"},
}

func marker(kind string, x, y float64, c string) string {
	if kind == "square" {
		return fmt.Sprintf(`<rect x="%.1f" y="%.1f" width="8" height="8" fill="none" stroke="%s" stroke-width="1.5"/>`, x-4, y-4, c)
	}
	return fmt.Sprintf(`<circle cx="%.1f" cy="%.1f" r="4" fill="%s"/>`, x, y, c)
}

func humanN(n float64) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%gM", n/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%gk", n/1e3)
	}
	return fmt.Sprintf("%g", n)
}

func humanS(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%g s", s)
	case s >= 1e-3:
		return fmt.Sprintf("%g ms", s*1e3)
	}
	return fmt.Sprintf("%g us", s*1e6)
}

func xmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// writePlot writes the SVG next to path and renames it over path, so a
// failed run leaves the old plot, never half a new one.
func writePlot(path, policy string, fit *bootsim.Fitted) error {
	// the temporary file first: a plot that cannot be written fails
	// before the series (a simulation to 100k ranks per point) are made
	f, err := os.CreateTemp(filepath.Dir(path), ".bootstrap-scaling-*.svg")
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	defer os.Remove(f.Name())
	ss, err := plotSeries(policy, fit)
	if err != nil {
		f.Close()
		return err
	}
	title := fmt.Sprintf("Bootstrap time to agreement (L = %s; measured %s)", policyText(policy), fit.Date)
	if _, err := f.WriteString(renderPlot(title, ss)); err != nil {
		f.Close()
		return fmt.Errorf("plot %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}
