package main

import (
	"flag"
	"fmt"
)

// failOnFlag is --fail-on of check and diff: the least change that makes
// the exit status non-zero, for a CI job under `set -e` that accepts
// compatible drift (docs/ci.md). The default, compatible, is the status
// abidiff gives and these commands always gave.
type failOnFlag struct{ level string }

const failOnLevels = "none, compatible or incompatible"

func (f *failOnFlag) register(fs *flag.FlagSet) {
	fs.StringVar(&f.level, "fail-on", "compatible",
		"the least change that makes the exit status non-zero: "+failOnLevels+" (bits below it are cleared; errors are 1 and 2 whatever it says)")
}

// check refuses a level that is not one of the three.
func (f *failOnFlag) check() error {
	switch f.level {
	case "none", "compatible", "incompatible":
		return nil
	}
	return fmt.Errorf("--fail-on %q: use %s", f.level, failOnLevels)
}

// exit is the process status for the change bits (4 compatible, 8
// incompatible): the bits themselves when the changes reach the level, else
// 0.
func (f *failOnFlag) exit(bits int) int {
	switch f.level {
	case "none":
		return 0
	case "incompatible":
		if bits&8 == 0 {
			return 0
		}
	}
	return bits
}

// changeExits is the exit-status list of a command that grades changes.
const changeExits = "0 no change (or none at the --fail-on level), 4 compatible changes only, " +
	"8 incompatible changes, 12 both, 1 error (bad input or a failure), 2 usage error; " +
	"with --fail-on incompatible, compatible changes alone exit 0; with --fail-on none, every run that completes exits 0"
