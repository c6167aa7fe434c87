// Package launch runs the ranks of a TCP bootstrap world: one rank in this
// process (RunRank: the flat bootstrap through the root named by
// NEURON_RT_ROOT_COMM_ID, then the per-NC bootstrap of one replica group
// spanning the world), or N rank processes on loopback whose reports it
// judges (RunLocal). cmd/nrtabi-runtime's `bootstrap` is its command line;
// the benchmarks and end-to-end tests run that command, and
// bench/bootstraptcp runs its own rank program through RunLocal
// (Options.RankCmd, InheritedRootListener). RunRank's network waits end
// with its context (runtime/transport/tcp), RunLocal's rank processes with
// its (internal/proc).
package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
	"github.com/nrtabi/nrtabi/runtime/collectives"
	"github.com/nrtabi/nrtabi/runtime/device"
	"github.com/nrtabi/nrtabi/runtime/nrt"
	"github.com/nrtabi/nrtabi/runtime/transport"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// Per-process knobs of a rank (not boundary facts).
const (
	EnvProgram = "NRTABI_BOOTSTRAP_PROGRAM" // "reordered": this rank posts the reordered program
	EnvNRTGit  = "NRTABI_NRT_GIT_HASH"      // replaces libnrt's git hash in this rank's tag
	EnvFault   = "NRTABI_BOOTSTRAP_FAULT"   // test hook (faults.go, -tags nrtabi_faults)
	// envRootFD names an inherited file descriptor holding the root's
	// listening socket, bound by the --local launcher before any rank
	// started, so no rank's ephemeral port can take the root's port first.
	envRootFD = "NRTABI_ROOT_LISTEN_FD"
)

// Options is one rank's (or, with Local, one launcher's) settings.
type Options struct {
	Rank, NRanks int
	RootID       string
	Program      string // "", "normal" or "reordered"
	NRTGit       string // the libnrt git hash this rank reports ("": the release's)
	Fault        string // EnvFault's value: the misbehaviour of this rank (tests)
	VNC          uint   // what nrt_get_total_vnc_count() reports; non-zero: no bootstrap
	Timing       bool   // report phase timestamps
	Hold         bool   // print "ready", wait for the launcher's start line, and after the report for stdin to close (worldprog/hold.go)
	Verbose      bool
	// PerInstance is L, the ranks of one instance (--per-instance; 0:
	// unset); Topology a simulated-topology file whose [[core]] rows give
	// L when PerInstance is unset. Else NRTABI_BOOTSTRAP_PER_INSTANCE;
	// else flat (docs/bootstrap-hierarchy.md).
	PerInstance int
	Topology    string
	// Roots is R, the roots of a multi-root world (--roots; 0: RunLocal
	// takes tcp.RootsFor's rule for its own ranks, a rank the length of
	// NRTABI_BOOTSTRAP_ROOTS): docs/bootstrap-hierarchy.md#multi-root-how-many-roots.
	Roots int

	Local                            int // RunLocal: the world size
	ReorderRank, SkewRank, FaultRank int // RunLocal: the rank given each knob, or -1
	// MisplaceRank is RunLocal's rank given per_instance L+1, so that it
	// claims the wrong instance; -1: none.
	MisplaceRank int
	ChildEnv     []string // RunLocal: added to every rank's environment
	// RankCmd is the program and arguments that run one rank, before the
	// rank's flags (RunLocal; default: this executable's "bootstrap").
	RankCmd []string

	// Launcher is the launcher whose environment gives the rank, size
	// and grouping (--launcher: slurm, ompi, torchrun; "": whichever is
	// set, ReadLauncher); placement what ResolveRank read from it.
	Launcher  string
	placement *Placement
}

// ResolveRank fills rank and nranks from the flags, else the launcher's
// environment (ReadLauncher: o.Launcher's, else any one's), and keeps the
// launcher's placement for the grouping (perInstance; with --per-instance
// or --topology the layout is not read). With both --rank and
// --nranks given the environment is not read: the flags say who this
// process is. One flag given beside a launcher that says otherwise is
// refused: the launcher's layout would describe another numbering.
func (o *Options) ResolveRank(set map[string]bool, getenv func(string) string) error {
	if !set["rank"] || !set["nranks"] {
		p, err := ReadLauncher(o.Launcher, getenv, o.PerInstance == 0 && o.Topology == "")
		if err != nil {
			return err
		}
		if p != nil {
			if set["rank"] && o.Rank != p.Rank {
				return fmt.Errorf("--rank %d but %s says rank %d (%s): give --nranks too to number the world yourself, or drop --rank", o.Rank, p.Launcher, p.Rank, p.From)
			}
			if set["nranks"] && o.NRanks != p.Size {
				return fmt.Errorf("--nranks %d but %s says a world of %d (%s): give --rank too to number the world yourself, or drop --nranks", o.NRanks, p.Launcher, p.Size, p.From)
			}
			o.Rank, o.NRanks, o.placement = p.Rank, p.Size, p
		}
	} else if o.Launcher != "" {
		return fmt.Errorf("--launcher %s with --rank and --nranks: the flags number the world, the launcher's environment is not read; give one or the other", o.Launcher)
	}
	if o.Rank < 0 || o.NRanks < 1 {
		return fmt.Errorf("no rank and world size: give --rank and --nranks, or run under srun (SLURM_PROCID/SLURM_NTASKS), mpirun (OMPI_COMM_WORLD_RANK/_SIZE) or torchrun (RANK/WORLD_SIZE)")
	}
	if err := tcp.CheckWorldSize("world size", o.NRanks); err != nil {
		return err
	}
	if o.Rank >= o.NRanks {
		return errors.New(cfmt.Sprintf(abi.MsgNccomInvalidRank, o.Rank, o.NRanks))
	}
	return nil
}

// bootstrapCore is the one NeuronCore of a bootstrap process.
type bootstrapCore struct{}

func (bootstrapCore) CoreIdentity(vnc uint32) (device.Identity, error) {
	if vnc != 0 {
		return device.Identity{}, fmt.Errorf("virtual core %d: a bootstrap process has core 0 only", vnc)
	}
	return device.Identity{VtpbIdx: 0}, nil
}

func (bootstrapCore) VirtualServerSize() uint32 { return 0 }

// UsageError is a setting RunRank or RunLocal refuses before starting.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }

// ErrFailed is what RunRank and RunLocal return when the world failed; the
// report lines on out (and the log on errw) say how. RunRank's error wraps
// the rank's failure too, so errors.Is(err, context.Canceled) tells a
// cancelled rank.
var ErrFailed = errors.New("bootstrap failed")

// RunRank is one rank: the world over TCP, then the replica group. It
// prints the rank's report line (worldprog.Report) on out and logs to errw.
// ctx bounds every wait (the root, the ring, the per-NC exchange): when it
// ends, the rank fails at once with its cause; the socket timeout still
// bounds each operation.
func RunRank(ctx context.Context, o Options, out, errw io.Writer) error {
	level, err := nrt.LogLevelFromEnv(os.Getenv)
	if err != nil {
		return &UsageError{err}
	}
	if o.Verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(errw, &slog.HandlerOptions{Level: level})).With("rank", o.Rank)
	res := worldprog.NewReport(o.Rank, o.NRanks)
	var held *worldprog.Hold
	var holdBound time.Duration
	finish := func(err error) error {
		res.Err = err
		res.TDone = time.Now()
		if o.Timing {
			res.UDone = worldprog.SelfUsage()
		}
		fmt.Fprintln(out, res.Line(o.Timing))
		if err == nil && held != nil {
			// The world stays up (its sockets open, this process alive)
			// until the launcher has every report: see worldprog/hold.go.
			err = held.End(ctx, holdBound)
		}
		if err != nil {
			var ce *tcp.CommIDError
			if errors.As(err, &ce) {
				log.Error(err.Error(), "cause", ce.Cause)
			} else {
				log.Error("bootstrap failed", "err", err)
			}
			return fmt.Errorf("%w: %w", ErrFailed, err)
		}
		return nil
	}

	cfg, err := tcp.ConfigFromEnv(os.Getenv)
	if err != nil {
		return finish(err)
	}
	cfg.Logger = log
	groupInit, err := collectives.GroupInitFromEnv(os.Getenv)
	if err != nil {
		return &UsageError{err}
	}
	if cfg.PerInstance, err = o.perInstance(cfg.PerInstance); err != nil {
		return &UsageError{err}
	}
	if p := o.placement; p != nil {
		log.Info("bootstrap: placed by "+p.Launcher, "rank", p.Rank, "nranks", p.Size, "per_instance", p.PerInstance, "from", p.From)
	}
	if cfg.PerInstance == 0 {
		log.Info("bootstrap: ranks per instance unset (--per-instance, --topology, " + abi.EnvBootstrapPerInstance + ", the launcher's layout): the world is flat")
	}
	// libnrt's answers come from the runtime (its device layer and version):
	// a --topology file is that device layer, so its vnc_regime decides
	// what nrt_get_total_vnc_count reports (contradiction
	// total-vnc-count-signature: the count, not a status); --vnc-count
	// overrides the regime for this process.
	if o.Topology != "" {
		t, err := nrt.LoadTopology(o.Topology)
		if err != nil {
			return &UsageError{fmt.Errorf("--topology: %w", err)}
		}
		nrt.SetDevice(t)
	}
	cfg.VNC = nrt.BootstrapIdentity{}
	if o.VNC != 0 {
		cfg.VNC = tcp.FixedVNC(o.VNC)
	}
	cfg.Versions = nrt.BootstrapIdentity{NRTGit: o.NRTGit}
	if cfg.Device, err = coreDeviceInfo(); err != nil {
		return finish(err)
	}
	if cfg.Hooks, err = faultHooks(o.Fault); err != nil {
		return &UsageError{err}
	}
	n := tcp.NewNet(cfg)
	rootAddr, err := tcp.ParseRootID(ctx, o.RootID, n.Timeout())
	if err != nil {
		return finish(err)
	}
	if stallBeforeRoot(o.Fault) {
		<-ctx.Done()
		return finish(fmt.Errorf("stalled (%s=%s) until: %w", EnvFault, o.Fault, context.Cause(ctx)))
	}
	if o.Hold {
		held, holdBound = worldprog.NewHold(os.Stdin), n.Timeout()
		fmt.Fprintln(out, "ready")
		if err := held.Start(ctx); err != nil {
			held = nil
			return finish(err)
		}
	}
	res.TStart = time.Now()
	if o.Timing {
		res.UStart = worldprog.SelfUsage()
	}

	roots, err := tcp.ParseRoots(abi.EnvBootstrapRoots, os.Getenv(abi.EnvBootstrapRoots))
	if err != nil {
		return &UsageError{err}
	}
	if o.Roots > 0 && len(roots) != o.Roots && !(o.Roots == 1 && roots == nil) {
		return &UsageError{fmt.Errorf("--roots %d, but %s lists %d roots: give every root's address there", o.Roots, abi.EnvBootstrapRoots, len(roots))}
	}
	var root *tcp.Root
	var world *tcp.Endpoint
	if len(roots) > 1 {
		root, world, err = bootScalable(ctx, o, n, roots, log)
		if root != nil {
			defer root.Wait()
		}
	} else if o.Rank == 0 {
		log.Info(cfmt.Sprintf(abi.MsgNccomRootFromEnv, o.RootID))
		if ln, lerr := InheritedRootListener(); lerr != nil {
			return finish(lerr)
		} else if ln != nil {
			root, err = n.CreateRootOn(ctx, ln, o.NRanks, true)
		} else {
			root, err = n.CreateRoot(ctx, rootAddr, o.NRanks, true)
		}
		if err != nil {
			return finish(err)
		}
		// The root outlives this rank's failure until the others have heard of it.
		defer root.Wait()
	}
	if len(roots) <= 1 {
		world, err = n.InitComm(ctx, rootAddr, o.Rank, o.NRanks, true)
	}
	if err != nil {
		if root != nil {
			// In the default framing the root's verdict reaches the ranks
			// only as a closed connection; the rank serving it says why.
			if rerr := root.Wait(); rerr != nil {
				err = fmt.Errorf("%w; the root this rank serves: %w", err, rerr)
			}
		}
		return finish(err)
	}
	if world == nil {
		res.UID = "none(single-vNC)"
		vnc, _ := cfg.VNC.TotalVNCCount()
		log.Info("nothing to bootstrap", "nrt_get_total_vnc_count", vnc)
		return finish(nil)
	}
	defer world.Close()
	res.TBoot = time.Now()
	if o.Timing {
		res.UBoot = worldprog.SelfUsage()
	}
	res.Prev, res.Next, res.Cluster = world.Prev(), world.Next(), world.ClusterID()
	if h, l := world.Hier(); h {
		res.PerInstance = l
	}
	res.Table = fmt.Sprintf("%016x", tcp.TableDigest(world.PeerTable()))

	// The phases after the bootstrap run under the world's endpoint: a
	// world that fails after this rank's gather (an abort heard on its
	// ring links or listener) ends them at once, with the dead rank's name
	// (docs/bootstrap-hierarchy.md#abort-frames).
	comms := &timedComms{Comms: tcp.NewComms(world.Context(), n), usage: o.Timing}
	defer comms.Close()
	rt, err := collectives.New(bootstrapCore{}, comms, collectives.Options{Logger: log, GroupInit: groupInit})
	if err != nil {
		return finish(err)
	}
	defer rt.Close()
	if err := rt.InitGlobalComm(0, uint32(o.Rank), uint32(o.NRanks), 0, o.RootID, true); err != nil {
		return finish(err)
	}
	if err := rt.SetupGlobalComm(0, 0, world); err != nil {
		return finish(err)
	}
	c := worldGroup(o)
	if err := rt.CalculateSignature(0, 0, c); err != nil {
		return finish(err)
	}
	node, bound, err := worldprog.InitGroupComm(rt, c, 0, 0)
	res.TAgree, res.UAgree, res.Bound = comms.lastInit, comms.lastUsage, bound
	if err != nil {
		return finish(err)
	}
	cm := comms.Comm(node.Comm())
	if cm == nil {
		return finish(fmt.Errorf("the replica group's comm handle %#x is unknown", node.Comm()))
	}
	uid, err := tcp.DescribeUniqueID(&cm.ID)
	if err != nil {
		return finish(err)
	}
	res.UID = uid
	if root != nil {
		if err := root.Wait(); err != nil {
			return finish(err)
		}
	}
	return finish(nil)
}

// coreDeviceInfo is the enc_neuron_device_info_t libnrt hands libnccom's
// init for core 0 of the device layer — what nrtabi_bootstrap_world gives
// a C rank (runtime/libnrt/world.go) — so a Go rank's peer record is the
// one a C rank in its place fills (docs/libnccom.md#the-peer-record).
func coreDeviceInfo() (abi.EncNeuronDeviceInfo, error) {
	ids, ok := nrt.Device().(device.IdentitySource)
	if !ok {
		return abi.EncNeuronDeviceInfo{}, errors.New("the device layer describes no cores: no device info for the peer record")
	}
	c, err := ids.CoreIdentity(0)
	if err != nil {
		return abi.EncNeuronDeviceInfo{}, fmt.Errorf("the peer record's device: %w", err)
	}
	return abi.EncNeuronDeviceInfo{NECDevID: int32(c.NecDev), MLAIdx: int32(c.MLAIdx), HostDeviceID: int32(c.HostDeviceID),
		PodType: abi.NECPodType(c.PodType)}, nil
}

// perInstance resolves L: --per-instance, else the topology file's vNC
// count (flags win), else the environment: NRTABI_BOOTSTRAP_PER_INSTANCE
// (env, already checked) and the launcher's layout (o.placement), which
// must agree when both are set; each refused by name when it is no whole
// number in 1..BOOTSTRAP_PER_INSTANCE_MAX
// (docs/nrtabi-runtime-bootstrap.md#launchers).
func (o *Options) perInstance(env int) (int, error) {
	switch {
	case o.PerInstance != 0:
		return o.PerInstance, tcp.CheckPerInstance("--per-instance", o.PerInstance)
	case o.Topology != "":
		t, err := nrt.LoadTopology(o.Topology)
		if err != nil {
			return 0, fmt.Errorf("--topology: %w", err)
		}
		return int(t.TotalVNCCount()), tcp.CheckPerInstance(fmt.Sprintf("--topology %s: its [[core]] rows (vNCs per instance)", o.Topology), int(t.TotalVNCCount()))
	}
	if p := o.placement; p != nil && p.PerInstance > 0 {
		if env != 0 && env != p.PerInstance {
			return 0, fmt.Errorf("%s=%d but %s's layout is %d ranks per node (%s): unset one, or give --per-instance", abi.EnvBootstrapPerInstance, env, p.Launcher, p.PerInstance, p.From)
		}
		return p.PerInstance, tcp.CheckPerInstance(p.Launcher+"'s ranks per node ("+p.From+")", p.PerInstance)
	}
	return env, nil
}

// worldGroup is the context of this rank's program (worldprog.Context).
func worldGroup(o Options) *collectives.Context {
	return worldprog.Context(o.Rank, o.NRanks, o.Program == "reordered")
}

// timedComms notes when the last comm init began: for the replica group
// that is the moment its signature verdict and unique id are agreed.
type timedComms struct {
	*tcp.Comms
	lastInit time.Time
	// usage: also take the process's Usage at lastInit (--timing)
	usage     bool
	lastUsage worldprog.Usage
}

func (t *timedComms) stamp() {
	t.lastInit = time.Now()
	if t.usage {
		t.lastUsage = worldprog.SelfUsage()
	}
}

func (t *timedComms) InitComm(rankN int, id *collectives.UniqueID, rank int, bypassGraph bool) (uintptr, error) {
	t.stamp()
	return t.Comms.InitComm(rankN, id, rank, bypassGraph)
}

// InitCommSplit is InitComm of a split of the world, timed alike.
func (t *timedComms) InitCommSplit(world transport.Transport, rankN int, id *collectives.UniqueID, rank int, bypassGraph bool) (uintptr, error) {
	t.stamp()
	return t.Comms.InitCommSplit(world, rankN, id, rank, bypassGraph)
}

// InitCommHier is InitComm over the 2-tier bootstrap, timed alike.
func (t *timedComms) InitCommHier(rankN int, id *collectives.UniqueID, rank, l int, bypassGraph bool) (uintptr, error) {
	t.stamp()
	return t.Comms.InitCommHier(rankN, id, rank, l, bypassGraph)
}

// InheritedRootListener returns the root socket RunLocal passed down to
// rank 0 (envRootFD), or nil when this process binds its own. A rank
// program other than `bootstrap` run through Options.RankCmd calls it to
// serve its root on the socket the launcher bound.
func InheritedRootListener() (*net.TCPListener, error) {
	v := os.Getenv(envRootFD)
	if v == "" {
		return nil, nil
	}
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("%s=%q: not an inherited file descriptor", envRootFD, v)
	}
	f := os.NewFile(uintptr(fd), "bootstrap root socket")
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("%s=%d: %w", envRootFD, fd, err)
	}
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		ln.Close()
		return nil, fmt.Errorf("%s=%d is not a TCP listener", envRootFD, fd)
	}
	return tl, nil
}
