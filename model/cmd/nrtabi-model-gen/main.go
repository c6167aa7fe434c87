// Command nrtabi-model-gen writes model/zspec_<release>.pml, the header of
// numbers and formulas the Promela models take from each embedded release's
// spec (`make generate`); with --check it writes nothing and exits 1 listing
// every file that generating would change (`make check-generated`).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/nrtabi/nrtabi/model"
	"github.com/nrtabi/nrtabi/spec"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, out, errw io.Writer) int {
	fs := flag.NewFlagSet("nrtabi-model-gen", flag.ContinueOnError)
	fs.SetOutput(errw)
	dir := fs.String("out", "model", "directory of the models")
	check := fs.Bool("check", false, "write nothing; exit 1 listing every file that generating would change")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	want := map[string][]byte{}
	for _, r := range spec.Releases() {
		s, err := spec.Load(r)
		if err != nil {
			fmt.Fprintln(errw, err)
			fmt.Fprintf(errw, "nrtabi-model-gen: spec/%s is not a valid spec\n", r)
			return 1
		}
		data, err := model.Generate(s)
		if err != nil {
			fmt.Fprintf(errw, "nrtabi-model-gen: %v\n", err)
			return 1
		}
		want[filepath.Join(*dir, model.FileName(r))] = data
	}
	// A header of a release that is gone is stale too.
	old, _ := filepath.Glob(filepath.Join(*dir, model.FileName("*")))
	var stale []string
	for _, p := range old {
		if _, ok := want[p]; !ok {
			stale = append(stale, p)
		}
	}
	var changed []string
	for p, data := range want {
		if have, err := os.ReadFile(p); err != nil || !bytes.Equal(have, data) {
			changed = append(changed, p)
		}
	}
	if *check {
		if len(changed)+len(stale) == 0 {
			return 0
		}
		for _, p := range append(changed, stale...) {
			fmt.Fprintf(errw, "stale: %s\n", p)
		}
		fmt.Fprintln(errw, "nrtabi-model-gen: the model headers are stale; run `make generate` and commit")
		return 1
	}
	for _, p := range changed {
		tmp := p + ".tmp"
		if err := os.WriteFile(tmp, want[p], 0o644); err != nil {
			fmt.Fprintf(errw, "nrtabi-model-gen: %v\n", err)
			return 1
		}
		if err := os.Rename(tmp, p); err != nil {
			fmt.Fprintf(errw, "nrtabi-model-gen: %v\n", err)
			return 1
		}
	}
	for _, p := range stale {
		if err := os.Remove(p); err != nil {
			fmt.Fprintf(errw, "nrtabi-model-gen: %v\n", err)
			return 1
		}
	}
	fmt.Fprintf(out, "model: %d headers (%s)\n", len(want), strings.Join(spec.Releases(), ", "))
	return 0
}
