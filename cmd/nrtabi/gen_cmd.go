package main

import (
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/spec"
)

func init() {
	register(&command{name: "gen", summary: "generate C, linker scripts and Go bindings for a release", run: genCmd})
}

func genCmd(args []string, out, errw io.Writer) int {
	fs := newFlags("gen", errw)
	var sf specFlags
	sf.register(fs)
	all := fs.Bool("all", false, "generate every embedded release, each into OUT/<release>")
	dest := fs.String("out", "", "output directory (with --all: the parent of one directory per release)")
	if rc := parse(fs, args); rc >= 0 {
		return rc
	}
	if *dest == "" {
		fmt.Fprintln(errw, "nrtabi gen: --out is required")
		return exitUsage
	}
	log := slog.New(slog.NewTextHandler(errw, &slog.HandlerOptions{Level: slog.LevelWarn}))
	type job struct {
		sf  specFlags
		dir string
	}
	var jobs []job
	if *all {
		if sf.dir != "" {
			fmt.Fprintln(errw, "nrtabi gen: --all generates the embedded releases; drop --dir")
			return exitUsage
		}
		for _, r := range spec.Releases() {
			jobs = append(jobs, job{specFlags{release: r}, filepath.Join(*dest, r)})
		}
	} else {
		jobs = append(jobs, job{sf, *dest})
	}
	// Generate everything before writing anything: a bad release leaves
	// every output directory as it was.
	type result struct {
		dir   string
		files []gen.File
	}
	var results []result
	for _, j := range jobs {
		s, err := j.sf.load()
		if err != nil {
			return reportSpecError(errw, j.sf.where(), err)
		}
		files, err := gen.Generate(s)
		if err != nil {
			fmt.Fprintf(errw, "nrtabi gen: %v\n", err)
			return exitError
		}
		results = append(results, result{j.dir, files})
	}
	for _, r := range results {
		if err := gen.Write(r.dir, r.files); err != nil {
			fmt.Fprintf(errw, "nrtabi gen: %v\n", err)
			return exitError
		}
		log.Info("generated", "dir", r.dir, "files", len(r.files))
		fmt.Fprintf(out, "%s: %d files\n", r.dir, len(r.files))
	}
	return exitOK
}
