package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"time"
)

func init() {
	register(&command{name: "demo", summary: "run the main job on the embedded default release and print a summary", run: demoCmd})
}

// demoStep is one part of `make demo`. Steps run in order; each prints a few
// lines. A failing step stops the demo with a non-zero exit.
type demoStep struct {
	order int
	title string
	run   func(d *demoEnv) error
}

var demoSteps []demoStep

func addDemoStep(s demoStep) { demoSteps = append(demoSteps, s) }

// demoEnv is shared by the steps: a scratch directory and the output.
type demoEnv struct {
	release string
	work    string
	out     io.Writer
	state   map[string]any // what earlier steps leave for later ones
}

func (d *demoEnv) printf(format string, args ...any) { fmt.Fprintf(d.out, "    "+format+"\n", args...) }

func demoCmd(args []string, out, errw io.Writer) int {
	fs := newFlags("demo", errw)
	release := fs.String("release", "2.31.24", "embedded release to demonstrate")
	keep := fs.Bool("keep", false, "keep the scratch directory")
	if rc := parse(fs, args); rc >= 0 {
		return rc
	}
	work, err := os.MkdirTemp("", "nrtabi-demo-")
	if err != nil {
		fmt.Fprintf(errw, "nrtabi demo: %v\n", err)
		return exitError
	}
	if *keep {
		fmt.Fprintf(out, "scratch directory: %s\n", work)
	} else {
		defer os.RemoveAll(work)
	}
	d := &demoEnv{release: *release, work: work, out: out, state: map[string]any{}}
	steps := append([]demoStep(nil), demoSteps...)
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].order < steps[j].order })
	start := time.Now()
	for i, s := range steps {
		fmt.Fprintf(out, "[%d/%d] %s\n", i+1, len(steps), s.title)
		t := time.Now()
		if err := s.run(d); err != nil {
			fmt.Fprintf(errw, "nrtabi demo: %s: %v\n", s.title, err)
			return exitError
		}
		fmt.Fprintf(out, "    (%s)\n", time.Since(t).Round(time.Millisecond))
	}
	fmt.Fprintf(out, "demo OK in %s\n", time.Since(start).Round(time.Millisecond))
	return exitOK
}
