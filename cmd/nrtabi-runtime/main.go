// Command nrtabi-runtime is the runtime side of nrtabi: it links the cgo
// runtime (runtime/nrt, runtime/collectives) and a C toolchain's output.
//
//	nrtabi-runtime bootstrap [--rank R --nranks N] | --local N
//	nrtabi-runtime build libnrt|libnccom|nccom-stubs [--spec NAME|DIR] [--out DIR]
//	nrtabi-runtime demo
//
// The checking side (spec, gen, check, show, extract, diff, release) is the
// pure-Go cmd/nrtabi. Run "nrtabi-runtime help COMMAND" for a command's flags.
//
// newApp below lists the commands; each runs under the one context an
// interrupt ends, passed to it as a parameter. The demo (`make demo`) is demo.go, its steps in order.
//
// Its manual is docs/nrtabi-runtime.md, with one page per subcommand beside
// it.
package main

import (
	"context"
	"io"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cli"
)

// newApp lists the commands; their Run funcs live one file each
// (bootstrap_cmd.go, build_cmd.go, demo.go).
func newApp() *cli.App {
	a := cli.NewApp("nrtabi-runtime", "the runtime side of the libnrt <-> libnccom boundary: TCP bootstrap ranks, the built libraries, the demo",
		&cli.Command{Name: "bootstrap", Summary: "run one rank of a TCP bootstrap world (--local N: N processes on loopback)",
			Synopsis: "[--rank R --nranks N | --launcher slurm|ompi|torchrun] [--root ID] [--program normal|reordered] | --local N [--reorder-rank R] [--skew-rank R]",
			Example:  "bootstrap --local 8", Run: bootstrapCmd},
		&cli.Command{Name: "build libnrt", Summary: "build the runtime's libnrt.so.1 (go build -buildmode=c-shared, versioned exports)",
			Synopsis: "[--spec NAME] [--out DIR] [--variant V]", Example: "build libnrt --out build", Run: buildLibnrt},
		&cli.Command{Name: "build nccom-stubs", Summary: "build the libnccom test doubles against a built libnrt.so.1",
			Synopsis: "[--spec NAME] [--libnrt DIR] [--out DIR]", Example: "build nccom-stubs --libnrt build --out build/nccom-stubs", Run: buildStubs},
		&cli.Command{Name: "build libnccom", Summary: "build the reference libnccom.so.2 (hand-written C over the generated header) against a built libnrt.so.1",
			Synopsis: "[--spec NAME] [--libnrt DIR] [--out DIR] [--git-hash H] [--sanitize]", Example: "build libnccom --libnrt build --out build", Run: buildLibnccom},
		&cli.Command{Name: "demo", Summary: "run the main job on the release this binary is built for (-tags nrtabi_release_NAME) and print a summary",
			Synopsis: "[--spec NAME] [--keep]", Example: "demo", Run: demoCmd},
	)
	// version names the release the generated ABI was selected for.
	a.BuiltFor = abi.Release + " (-tags " + abi.BuildTag + ")"
	return a
}

// An interrupt ends the command's context (cli.Main): its child processes
// (compilers, rank processes, C hosts) are killed with their process groups.
func main() { cli.Main(newApp()) }

// run is the app's Run, for the tests.
func run(args []string, out, errw io.Writer) int {
	return newApp().Run(context.Background(), args, out, errw)
}
