// Command nrtabi owns the libnrt <-> libnccom boundary's facts: it validates
// and shows the per-release spec, generates bindings from it, checks real
// binaries and headers against it, and derives and compares releases. It is
// pure Go (CGO_ENABLED=0 go install works); the runtime side (bootstrap
// ranks, building the libraries, the demo) is cmd/nrtabi-runtime.
//
//	nrtabi spec validate|show [--spec NAME|DIR]
//	nrtabi gen --all | --spec NAME|DIR --out DIR
//	nrtabi check [--spec NAME|DIR] FILE...
//	nrtabi show STRUCT FILE
//	nrtabi extract FILE
//	nrtabi diff OLD NEW
//	nrtabi compat LIBNRT LIBNCCOM [PLUGIN]
//	nrtabi release new --name NEW --binary FILE...
//	nrtabi version
//
// Run "nrtabi help COMMAND" for a command's synopsis, flags and an example.
//
// Its manual is docs/nrtabi.md, with one page per subcommand beside it.
package main

import (
	"context"
	"flag"
	"io"

	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/readers/elfread"
)

// newApp lists the commands, their Run funcs one file each (check_cmd.go,
// diff_cmd.go, ...). It is made when main runs, not at start-up: no command
// registers itself.
func newApp() *cli.App {
	a := cli.NewApp("nrtabi", "the libnrt <-> libnccom boundary's spec: validate, generate, check binaries, derive and compare releases",
		specValidateCommand(), specShowCommand(), genCommand(), checkCommand(), showCommand(),
		extractCommand(), diffCommand(), releaseNewCommand(), compatCommand())
	// A mapped input truncated during the run is named in one line
	// (elfread's fault.go), not a crash.
	a.Fault = elfread.FaultError
	return a
}

// main runs the command under the one context of the process, which an
// interrupt ends (cli.Main).
func main() { cli.Main(newApp()) }

// run is the app's Run, for the tests.
func run(args []string, out, errw io.Writer) int {
	return newApp().Run(context.Background(), args, out, errw)
}

// debugDirFlag is --debug-dir, shared by every command that reads DWARF.
type debugDirFlag struct{ dirs cli.ListFlag }

func (d *debugDirFlag) register(fs *flag.FlagSet) {
	fs.Var(&d.dirs, "debug-dir", "directory of separate debug files (repeatable, or a comma list; default /usr/lib/debug)")
}

// get returns the --debug-dir values, or the distribution default.
func (d *debugDirFlag) get() []string {
	if len(d.dirs) == 0 {
		return elfread.DefaultDebugDirs
	}
	return d.dirs
}
