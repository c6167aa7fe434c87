// Command nrtabi-runtime is the runtime side of nrtabi: it links the cgo
// runtime (runtime/nrt, runtime/collectives) and a C toolchain's output.
//
//	nrtabi-runtime bootstrap [--rank R --nranks N] | --local N
//	nrtabi-runtime build libnrt|libnccom|nccom-stubs [--spec NAME|DIR] [--out DIR]
//	nrtabi-runtime demo
//
// The checking side (spec, gen, check, show, extract, diff, release) is the
// pure-Go cmd/nrtabi. Run "nrtabi-runtime help COMMAND" for a command's flags.
package main

import (
	"io"
	"os"

	"github.com/nrtabi/nrtabi/internal/cli"
)

var app = cli.NewApp("nrtabi-runtime", "the runtime side of the libnrt <-> libnccom boundary: TCP bootstrap ranks, the built libraries, the demo")

func main() { os.Exit(app.Run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is app.Run, for the tests.
func run(args []string, out, errw io.Writer) int { return app.Run(args, out, errw) }
