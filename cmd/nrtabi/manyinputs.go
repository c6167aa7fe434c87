package main

import (
	"flag"
	"fmt"
	"runtime"

	"github.com/nrtabi/nrtabi/readers/inputs"
)

// manyFlags are the flags of a command that reads many inputs in one run
// (check, show; docs/nrtabi-check.md#many-inputs): -j, how many at once,
// and --non-elf, what a walked directory's non-ELF or unreadable entry does.
type manyFlags struct {
	jobs   int
	nonELF string
}

func (m *manyFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&m.jobs, "j", runtime.NumCPU(), "how many inputs to read at once (at most that many are open); the report is the same for any -j")
	fs.StringVar(&m.nonELF, "non-elf", inputs.NonELFSkip, "what an entry of a directory that is no ELF file or cannot be read does: skip (listed in the report as not read) or fail (exit 1 naming it); a FILE named on the command line is always read")
}

// check refuses a -j or --non-elf that means nothing.
func (m *manyFlags) check() error {
	if m.jobs < 1 {
		return fmt.Errorf("-j %d: give the number of inputs to read at once, 1 or more (default the number of CPUs, %d)", m.jobs, runtime.NumCPU())
	}
	if m.nonELF != inputs.NonELFSkip && m.nonELF != inputs.NonELFFail {
		return fmt.Errorf("--non-elf %q: use skip or fail", m.nonELF)
	}
	return nil
}

// expand turns FILE and DIR arguments into the run's inputs; packages and
// archives, named or met in a walk, into their ELF members read in memory,
// paired with the debug packages of the run (packages.go;
// docs/packages.md#debug-packages).
func (m *manyFlags) expand(args []string) ([]inputs.Input, error) {
	return expandPackages(args, inputs.Options{NonELF: m.nonELF})
}
