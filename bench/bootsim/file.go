package bootsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// Fitted is the simulator's committed state (docs/benchmarks.md#the-simulator):
// the costs fitted to one run's rows of at most FitMaxN ranks, for the Go
// ranks and for the C hosts, and that run's measured medians, so the
// projection to 10k and 100k ranks and the plot are made from a file in
// the tree, not from a fit that was never looked at.
type Fitted struct {
	Date    string        `json:"date"`      // of the run, RFC 3339 UTC
	Load    string        `json:"load"`      // the load average before and after
	NProc   string        `json:"nproc"`     // the host's CPUs
	FitMaxN int           `json:"fit_max_n"` // rows of at most this many ranks were fitted; the rest validate
	Go      Params        `json:"go"`
	C       Params        `json:"c"`
	Rows    []MeasuredRow `json:"rows"`
	// AgreePath is how the measured worlds' replica group got its comm:
	// "split" from the world's bootstrap (docs/bootstrap.md#group-comm-split),
	// or empty for runs before that was the default, whose group ran a
	// second bootstrap of the world's shape
	AgreePath string            `json:"agree_path,omitempty"`
	Notes     map[string]string `json:"notes,omitempty"` // a variant not measured, and why
}

// MeasuredRow is one variant's median at one size.
type MeasuredRow struct {
	Variant string  `json:"variant"` // e.g. hier-go-bidi
	Algo    string  `json:"algo"`    // star, flat, hier
	Lang    string  `json:"lang"`    // go or c
	Bidi    bool    `json:"bidi"`
	Roots   int     `json:"roots"`
	N       int     `json:"n"`
	L       int     `json:"l"`
	BootMs  float64 `json:"boot_ms"`
	AgreeMs float64 `json:"agree_ms"`
	// What the world had of the host (docs/benchmarks.md#the-simulator),
	// medians over its runs; 0 in rows measured before they were: the
	// fraction of the cores the rest of the host left it (/proc/stat less
	// its own CPU, over its wall time), its CPU (user + sys of all its
	// processes) and their voluntary context switches.
	Avail float64 `json:"avail,omitempty"`
	CPUMs float64 `json:"cpu_ms,omitempty"`
	Nvcsw float64 `json:"nvcsw,omitempty"`
	// The same share over the window each figure times, from the last
	// rank's start to the last rank's boot (AvailBoot) and agree
	// (AvailAgree), medians; 0 in rows measured before it was.
	AvailBoot  float64 `json:"avail_boot,omitempty"`
	AvailAgree float64 `json:"avail_agree,omitempty"`
	// The run queue over the same windows (docs/benchmarks.md#the-simulator-2026-12-04-night),
	// medians; 0 in rows measured before it was: the host's runnable
	// tasks, the mean wait of a woken task for a CPU (µs), and the share of
	// the window at least one of the world's tasks waited for one; and
	// the background processes the bench ran the row beside (-burn).
	Burn          int     `json:"burn,omitempty"`
	RunnableBoot  float64 `json:"runnable_boot,omitempty"`
	WaitBootUs    float64 `json:"wait_boot_us,omitempty"`
	PressureBoot  float64 `json:"pressure_boot,omitempty"`
	RunnableAgree float64 `json:"runnable_agree,omitempty"`
	WaitAgreeUs   float64 `json:"wait_agree_us,omitempty"`
	PressureAgree float64 `json:"pressure_agree,omitempty"`
}

// maxFitted bounds the file (a few hundred rows fit in far less).
const maxFitted = 1 << 20

// ParseFitted reads a Fitted, refusing unknown fields, trailing data,
// an algorithm or language it does not know, and numbers outside what a
// world can be.
func ParseFitted(data []byte) (*Fitted, error) {
	if len(data) > maxFitted {
		return nil, fmt.Errorf("%d bytes, more than %d", len(data), maxFitted)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f Fitted
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the object")
	}
	if f.FitMaxN < 2 || f.FitMaxN > maxRanks {
		return nil, fmt.Errorf("fit_max_n %d: want 2..%d", f.FitMaxN, maxRanks)
	}
	for _, p := range []struct {
		name string
		p    Params
	}{{"go", f.Go}, {"c", f.C}} {
		if err := checkParams(p.p); err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
	}
	if f.AgreePath != "" && f.AgreePath != "split" {
		return nil, fmt.Errorf("agree_path %q: want split or nothing", f.AgreePath)
	}
	if len(f.Rows) > 4096 {
		return nil, fmt.Errorf("%d rows: at most 4096", len(f.Rows))
	}
	for i, r := range f.Rows {
		if _, err := ParseAlgo(r.Algo); err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
		switch {
		case r.Lang != "go" && r.Lang != "c":
			return nil, fmt.Errorf("row %d: lang %q: want go or c", i, r.Lang)
		case r.N < 1 || r.N > maxRanks || r.L < 0 || r.L > r.N || r.Roots < 0 || r.Roots > r.N:
			return nil, fmt.Errorf("row %d: n %d, l %d, roots %d: not a world", i, r.N, r.L, r.Roots)
		case !finite(r.BootMs) || r.BootMs <= 0 || !finite(r.AgreeMs) || r.AgreeMs < 0:
			return nil, fmt.Errorf("row %d: boot %v ms, agree %v ms", i, r.BootMs, r.AgreeMs)
		case !finite(r.Avail) || r.Avail < 0 || r.Avail > 1 || !finite(r.CPUMs) || r.CPUMs < 0 || r.CPUMs > 1e9 || !finite(r.Nvcsw) || r.Nvcsw < 0 || r.Nvcsw > 1e12:
			return nil, fmt.Errorf("row %d: avail %v, cpu %v ms, %v switches: want a share of 0..1 and counts >= 0", i, r.Avail, r.CPUMs, r.Nvcsw)
		case !finite(r.AvailBoot) || r.AvailBoot < 0 || r.AvailBoot > 1 || !finite(r.AvailAgree) || r.AvailAgree < 0 || r.AvailAgree > 1:
			return nil, fmt.Errorf("row %d: avail_boot %v, avail_agree %v: want shares of 0..1", i, r.AvailBoot, r.AvailAgree)
		case r.Burn < 0 || r.Burn > 1<<16 || !finite(r.RunnableBoot) || r.RunnableBoot < 0 || r.RunnableBoot > 1e7 || !finite(r.RunnableAgree) || r.RunnableAgree < 0 || r.RunnableAgree > 1e7:
			return nil, fmt.Errorf("row %d: burn %d, runnable %v / %v: want task counts of 0..1e7", i, r.Burn, r.RunnableBoot, r.RunnableAgree)
		case !finite(r.WaitBootUs) || r.WaitBootUs < 0 || r.WaitBootUs > 3.6e9 || !finite(r.WaitAgreeUs) || r.WaitAgreeUs < 0 || r.WaitAgreeUs > 3.6e9 ||
			!finite(r.PressureBoot) || r.PressureBoot < 0 || r.PressureBoot > 1 || !finite(r.PressureAgree) || r.PressureAgree < 0 || r.PressureAgree > 1:
			return nil, fmt.Errorf("row %d: wait %v / %v us, pressure %v / %v: want waits of 0..1 h and shares of 0..1", i, r.WaitBootUs, r.WaitAgreeUs, r.PressureBoot, r.PressureAgree)
		case len(r.Variant) == 0 || len(r.Variant) > 64 || strings.ContainsFunc(r.Variant, func(c rune) bool { return c < '-' || c > 'z' }):
			return nil, fmt.Errorf("row %d: variant name %q", i, r.Variant)
		}
	}
	return &f, nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// checkParams refuses costs no host has: negative, not finite, or over an
// hour; a backlog or a root count past the largest world.
func checkParams(p Params) error {
	for _, c := range []struct {
		name string
		v    float64
	}{{"fixed", p.Fixed}, {"accept", p.Accept}, {"reply", p.Reply}, {"hop", p.Hop}, {"hop_per_active", p.HopPerActive},
		{"record", p.Record}, {"table", p.Table}, {"skew", p.Skew}, {"stagger", p.Stagger}, {"retry", p.Retry},
		{"bidi_extra", p.BidiExtra}, {"wake", p.Wake}, {"wake_fixed", p.WakeFixed},
		{"crowd", p.Crowd}, {"wait_scale", p.WaitScale}, {"run_wait", p.RunWait}, {"work", p.Work}, {"start_work", p.StartWork}, {"bidi_work", p.BidiWork}, {"wake_work", p.WakeWork}, {"agree_work", p.AgreeWork}} {
		if !finite(c.v) || c.v < 0 || c.v > 3600 {
			return fmt.Errorf("%s = %v: want a cost of 0..3600 s", c.name, c.v)
		}
	}
	if !finite(p.Runnable) || p.Runnable < 0 || p.Runnable > 1e7 {
		return fmt.Errorf("runnable = %v: want a task count of 0..1e7", p.Runnable)
	}
	if !finite(p.Avail) || p.Avail < 0 || p.Avail > 1 {
		return fmt.Errorf("avail = %v: want a share of 0..1", p.Avail)
	}
	if p.Cores < 0 || p.Cores > 1<<16 {
		return fmt.Errorf("cores %d: want 0 (one per rank) .. %d", p.Cores, 1<<16)
	}
	if p.Gathers < 0 || p.Gathers > 16 || p.Backlog < 0 || p.Backlog > maxRanks || p.Roots < 0 || p.Roots > maxRanks {
		return fmt.Errorf("gathers %d, backlog %d, roots %d: out of range", p.Gathers, p.Backlog, p.Roots)
	}
	return nil
}

// ParseAlgo is the inverse of Algo.String.
func ParseAlgo(s string) (Algo, error) {
	for _, a := range []Algo{Star, Flat, Hier} {
		if a.String() == s {
			return a, nil
		}
	}
	return 0, fmt.Errorf("algo %q: want star, flat or hier", s)
}

// LoadFitted reads path: a regular file of at most maxFitted bytes.
func LoadFitted(path string) (*Fitted, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, maxFitted+1))
	if err != nil {
		return nil, err
	}
	f, err := ParseFitted(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (rerun make bench-bootstrap to write it anew)", path, err)
	}
	return f, nil
}

// SaveFitted writes f to path through a temporary file and a rename: a
// failed write leaves the old file.
func SaveFitted(path string, f *Fitted) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if _, err := ParseFitted(data); err != nil {
		return fmt.Errorf("bootsim: the fit would not read back: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".fitted-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
