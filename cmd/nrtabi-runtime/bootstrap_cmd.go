package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/runtime/launch"
)

// bootstrapCmd is the command line of runtime/launch: one rank of a world
// over TCP, or --local N such processes on loopback checked for agreement.
func bootstrapCmd(ctx context.Context, c *cli.Command, args []string, out, errw io.Writer) error {
	fs := c.Flags(out, errw)
	o := launch.Options{}
	fs.IntVar(&o.Rank, "rank", -1, "this process's rank (default: SLURM_PROCID, OMPI_COMM_WORLD_RANK or RANK)")
	fs.IntVar(&o.NRanks, "nranks", 0, "world size (default: SLURM_NTASKS, OMPI_COMM_WORLD_SIZE or WORLD_SIZE)")
	fs.StringVar(&o.Launcher, "launcher", "", "the launcher whose environment numbers the ranks: "+strings.Join(launch.LauncherNames(), ", ")+" (default: the one whose variables are set)")
	fs.StringVar(&o.RootID, "root", os.Getenv(abi.EnvRootCommID), "root comm id <ipv4>:<port> | [<ipv6>]:<port> | <hostname>:<port> (default: "+abi.EnvRootCommID+")")
	fs.StringVar(&o.Program, "program", os.Getenv(launch.EnvProgram), "this rank's program: normal or reordered (default: "+launch.EnvProgram+")")
	fs.StringVar(&o.NRTGit, "nrt-git-hash", os.Getenv(launch.EnvNRTGit), "libnrt git hash this rank reports (default: "+launch.EnvNRTGit+", else the release's)")
	fs.UintVar(&o.VNC, "vnc-count", 0, "what nrt_get_total_vnc_count() reports in this process; non-zero makes the bootstrap a no-op")
	fs.BoolVar(&o.Timing, "timing", false, "report phase timestamps (for bench/)")
	fs.BoolVar(&o.Hold, "hold", false, "print \"ready\" and wait for the launcher's start line on stdin; after the report, wait for stdin to close (--local --timing uses it to start every rank at once and to keep every rank up until all have reported)")
	fs.BoolVar(&o.Verbose, "v", false, "log debug progress")
	fs.IntVar(&o.Local, "local", 0, "spawn N processes of this binary on loopback and check that they agree")
	fs.IntVar(&o.ReorderRank, "reorder-rank", -1, "with --local: the rank whose program is reordered")
	fs.IntVar(&o.SkewRank, "skew-rank", -1, "with --local: the rank that reports a different libnrt git hash")
	fs.IntVar(&o.FaultRank, "fault-rank", -1, "with --local: the rank that gets "+launch.EnvFault+" (a test hook of -tags nrtabi_faults builds)")
	fs.IntVar(&o.PerInstance, "per-instance", 0, "ranks per instance L: a world of more ranks takes the hierarchical bootstrap (default: --topology, else "+abi.EnvBootstrapPerInstance+", else flat)")
	fs.StringVar(&o.Topology, "topology", "", "simulated-topology file whose [[core]] rows give the ranks per instance when --per-instance is not given")
	fs.IntVar(&o.Roots, "roots", 0, "roots R of a multi-root world (default: with --local, ceil(N/"+fmt.Sprint(abi.BootstrapRanksPerRoot)+") in the default framing; a rank: as many as "+abi.EnvBootstrapRoots+" lists)")
	fs.IntVar(&o.MisplaceRank, "misplace-rank", -1, "with --local and a hierarchical world: the rank given per_instance L+1 (a rank in the wrong instance)")
	if err := c.Parse(fs, args); err != nil {
		return err
	}
	o.Fault = os.Getenv(launch.EnvFault)
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["per-instance"] && o.PerInstance == 0 {
		// 0 is "unset" inside; given on the command line it is a mistake.
		return c.Usagef("--per-instance 0: ranks per instance must be a whole number in 1..%d", abi.BootstrapPerInstanceMax)
	}
	if err := launch.CheckLocalFlags(&o, set, os.Getenv); err != nil {
		return c.Usagef("%v", err)
	}
	if o.Local != 0 {
		return exit(c, launch.RunLocal(ctx, o, out, errw))
	}
	if err := o.ResolveRank(set, os.Getenv); err != nil {
		return c.Usagef("%v", err)
	}
	if o.Program != "" && o.Program != "normal" && o.Program != "reordered" {
		return c.Usagef("program %q: use normal or reordered", o.Program)
	}
	if o.RootID == "" {
		return c.Usagef("no root comm id: set %s (or --root) to <ipv4>:<port> | [<ipv6>]:<port> | <hostname>:<port>", abi.EnvRootCommID)
	}
	return exit(c, launch.RunRank(ctx, o, out, errw))
}

// exit is the command's error for a launch result: the report lines
// already say why a world failed, so that is exit 1 with nothing more
// printed; a usage error is one.
func exit(c *cli.Command, err error) error {
	var ue *launch.UsageError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ue):
		return c.Usagef("%v", err)
	case errors.Is(err, launch.ErrFailed):
		return cli.Exit(cli.ExitError)
	}
	return err
}
