// Command bootstraptcp is the named peer of bench/bootstrap_tcp.sh: a naive
// everyone-to-root star that reaches the agreement `nrtabi-runtime
// bootstrap` reaches (every rank knows the address table, the signature
// verdict and one unique id) in a single round trip, so the bench can say
// what the flat bootstrap, the tree AND-reduce and the hypercube broadcast
// cost against the least a star can do.
//
//	bootstraptcp --local N [--timing] [-v] [--floor [--per-instance L] [--via-root]]
//	bootstraptcp rank --rank R --nranks N --root ID [--timing] [--hold] [-v] [--floor [--via-root]]
//
// --floor runs the floor instead (floor.go): the star's gather, then only
// what the seed adds to it, so that the bench can say how far a goal
// stated against the star sits from the least the seed's protocol costs.
//
// --local spawns N rank processes of this binary through runtime/launch's
// loopback launcher (the one `nrtabi-runtime bootstrap --local` uses), so
// both sides of the bench are started, held, timed and judged alike.
// It is a benchmark peer, not a libnccom protocol; nothing outside bench/
// runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/launch"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, launch.ErrFailed) {
			fmt.Fprintln(os.Stderr, "bench/bootstraptcp:", err)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out, errw io.Writer) error {
	if len(args) > 0 && args[0] == "rank" {
		return rankCmd(ctx, args[1:], out)
	}
	fs := flag.NewFlagSet("bootstraptcp", flag.ContinueOnError)
	fs.SetOutput(errw)
	o := launch.Options{}
	fs.IntVar(&o.Local, "local", 0, "spawn N naive ranks of this binary on loopback and check that they agree")
	fs.BoolVar(&o.Timing, "timing", false, "report phase timestamps")
	fs.BoolVar(&o.Verbose, "v", false, "print a failed rank's stderr")
	floorMode := fs.Bool("floor", false, "run the floor instead of the star: the star's gather, then the rings made and get_nccl_comm's four exchanges, nothing else (floor.go)")
	fs.IntVar(&o.PerInstance, "per-instance", 0, "with --floor: ranks per instance L (0: one instance)")
	viaRoot := fs.Bool("via-root", false, "with --floor: the agree through the root on the gather's connections, kept open")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.Local == 0 || fs.NArg() != 0 {
		return errors.New("usage: bootstraptcp --local N [--timing] [-v] [--floor [--per-instance L]] | bootstraptcp rank --rank R --nranks N --root ID [--floor]")
	}
	if o.PerInstance != 0 && !*floorMode {
		return errors.New("--per-instance is the floor's (--floor): the star has no instances")
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find this binary to run its ranks: %w", err)
	}
	o.RankCmd = []string{exe, "rank"}
	if *viaRoot && !*floorMode {
		return errors.New("--via-root is the floor's (--floor)")
	}
	if *floorMode {
		o.RankCmd = append(o.RankCmd, "--floor")
		if *viaRoot {
			o.RankCmd = append(o.RankCmd, "--via-root")
		}
	}
	o.ReorderRank, o.SkewRank, o.FaultRank, o.MisplaceRank = -1, -1, -1, -1
	return launch.RunLocal(ctx, o, out, errw)
}

// rankCmd is one naive rank; it speaks the flags launch.RunLocal hands a
// rank and prints the report line RunLocal judges.
func rankCmd(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("bootstraptcp rank", flag.ContinueOnError)
	rank := fs.Int("rank", -1, "this process's rank")
	nranks := fs.Int("nranks", 0, "world size")
	rootID := fs.String("root", "", "the root's <ip>:<port>")
	timing := fs.Bool("timing", false, "report phase timestamps")
	hold := fs.Bool("hold", false, "print \"ready\", wait for the launcher's start line on stdin, and after the report for stdin to close (runtime/worldprog/hold.go)")
	fs.Bool("v", false, "accepted for launch.RunLocal; the naive rank has nothing to log")
	floorMode := fs.Bool("floor", false, "run a floor rank (L from "+abi.EnvBootstrapPerInstance+", as the launcher sets it)")
	viaRoot := fs.Bool("via-root", false, "with --floor: the agree through the root")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := tcp.CheckWorldSize("--nranks", *nranks); err != nil {
		return err
	}
	if *rank < 0 || *rank >= *nranks {
		return fmt.Errorf("--rank %d: not a rank of a world of %d", *rank, *nranks)
	}
	cfg, err := tcp.ConfigFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	timeout := cfg.SockTimeout()
	rootAddr, err := tcp.ParseRootID(ctx, *rootID, timeout)
	if err != nil {
		return err
	}
	// The launcher's two holds (runtime/worldprog/hold.go), as its own ranks
	// take them: the star's ranks that have their answer stay up, idle,
	// until the last has it.
	var held *worldprog.Hold
	if *hold {
		held = worldprog.NewHold(os.Stdin)
		fmt.Fprintln(out, "ready")
		if err := held.Start(ctx); err != nil {
			return err
		}
	}
	res := worldprog.NewReport(*rank, *nranks)
	s := star{rank: *rank, nranks: *nranks, root: rootAddr, timeout: timeout}
	if *floorMode {
		res.Err = runFloor(ctx, floor{star: s, l: cfg.PerInstance, viaRoot: *viaRoot}, res)
	} else {
		res.Err = runRank(ctx, s, res)
	}
	res.TDone, res.UDone = time.Now(), worldprog.SelfUsage()
	fmt.Fprintln(out, res.Line(*timing))
	if res.Err == nil && held != nil {
		res.Err = held.End(ctx, timeout)
	}
	if res.Err != nil {
		return launch.ErrFailed
	}
	return nil
}
