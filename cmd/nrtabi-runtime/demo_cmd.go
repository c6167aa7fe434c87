package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/spec"
)

func init() {
	app.Register(&cli.Command{Name: "demo", Summary: "run the main job on the embedded default release and print a summary",
		Synopsis: "[--spec NAME] [--keep]", Example: "demo", Run: demoCmd})
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

func demoCmd(c *cli.Command, args []string, out, errw io.Writer) int {
	fs := c.Flags(errw)
	var sf cli.SpecFlag
	sf.Register(fs, "spec", spec.Default, "the release to demonstrate (an embedded one)")
	keep := fs.Bool("keep", false, "keep the scratch directory")
	if rc := c.Parse(fs, args, errw); rc >= 0 {
		return rc
	}
	release, rc := embeddedRelease(c, &sf, errw)
	if rc >= 0 {
		return rc
	}
	work, err := os.MkdirTemp("", "nrtabi-demo-")
	if err != nil {
		return c.Errorf(errw, "%v", err)
	}
	if *keep {
		fmt.Fprintf(out, "scratch directory: %s\n", work)
	} else {
		defer os.RemoveAll(work)
	}
	d := &demoEnv{release: release, work: work, out: out, state: map[string]any{}}
	steps := append([]demoStep(nil), demoSteps...)
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].order < steps[j].order })
	start := time.Now()
	for i, s := range steps {
		fmt.Fprintf(out, "[%d/%d] %s\n", i+1, len(steps), s.title)
		t := time.Now()
		if err := s.run(d); err != nil {
			return c.Errorf(errw, "%s: %v", s.title, err)
		}
		fmt.Fprintf(out, "    (%s)\n", time.Since(t).Round(time.Millisecond))
	}
	fmt.Fprintf(out, "demo OK in %s\n", time.Since(start).Round(time.Millisecond))
	return cli.ExitOK
}
