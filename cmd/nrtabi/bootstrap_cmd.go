package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
	"github.com/nrtabi/nrtabi/runtime/collectives"
	"github.com/nrtabi/nrtabi/runtime/device"
	"github.com/nrtabi/nrtabi/runtime/nrt"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// `nrtabi bootstrap` runs one rank of a world over TCP: the flat bootstrap
// through the root named by NEURON_RT_ROOT_COMM_ID (a global init, so the
// git-hash tags are compared), then the per-NC bootstrap of one replica
// group spanning the world (signature validation up a tree, unique-id
// broadcast down a hypercube, comm init). --local N runs N such processes on
// loopback and checks that they agree.
func init() {
	register(&command{name: "bootstrap", summary: "run one rank of a TCP bootstrap world (--local N: N processes on loopback)", run: bootstrapCmd})
}

// The launchers whose environment names a rank, in the order they are tried.
var launchers = []struct{ name, rank, size string }{
	{"torchrun", "RANK", "WORLD_SIZE"},
	{"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
	{"Slurm", "SLURM_PROCID", "SLURM_NTASKS"},
}

// Per-process knobs of this command (not boundary facts).
const (
	envProgram = "NRTABI_BOOTSTRAP_PROGRAM" // "reordered": this rank posts the reordered program
	envNRTGit  = "NRTABI_NRT_GIT_HASH"      // replaces libnrt's git hash in this rank's tag
	envFault   = "NRTABI_BOOTSTRAP_FAULT"   // test hook: bad-magic, truncated-record, die-mid-record, die-after-record, die-after-reply
	// envRootFD names an inherited file descriptor holding the root's
	// listening socket, bound by the --local launcher before any rank
	// started, so no rank's ephemeral port can take the root's port first.
	envRootFD = "NRTABI_ROOT_LISTEN_FD"
)

type bootstrapOpts struct {
	rank, nranks int
	rootID       string
	program      string
	nrtGit       string
	fault        string
	vnc          uint
	naive        bool
	timing       bool
	hold         bool
	verbose      bool

	local                            int
	reorderRank, skewRank, faultRank int
	childEnv                         []string // with --local: added to every rank's environment
}

func bootstrapCmd(args []string, out, errw io.Writer) int {
	fs := newFlags("bootstrap", errw)
	o := bootstrapOpts{}
	fs.IntVar(&o.rank, "rank", -1, "this process's rank (default: RANK, OMPI_COMM_WORLD_RANK or SLURM_PROCID)")
	fs.IntVar(&o.nranks, "nranks", 0, "world size (default: WORLD_SIZE, OMPI_COMM_WORLD_SIZE or SLURM_NTASKS)")
	fs.StringVar(&o.rootID, "root", os.Getenv(abi.EnvRootCommID), "root comm id <ipv4>:<port> | [<ipv6>]:<port> | <hostname>:<port> (default: "+abi.EnvRootCommID+")")
	fs.StringVar(&o.program, "program", os.Getenv(envProgram), "this rank's program: normal or reordered (default: "+envProgram+")")
	fs.StringVar(&o.nrtGit, "nrt-git-hash", os.Getenv(envNRTGit), "libnrt git hash this rank reports (default: "+envNRTGit+", else the release's)")
	fs.UintVar(&o.vnc, "vnc-count", 0, "what nrt_get_total_vnc_count() reports in this process; non-zero makes the bootstrap a no-op")
	fs.BoolVar(&o.naive, "naive", false, "run the naive everyone-to-root gather instead (the benchmark's peer)")
	fs.BoolVar(&o.timing, "timing", false, "report phase timestamps (for bench/)")
	fs.BoolVar(&o.hold, "hold", false, "print \"ready\" and wait for stdin to close before starting (--local --timing uses it to start every rank at once)")
	fs.BoolVar(&o.verbose, "v", false, "log debug progress")
	fs.IntVar(&o.local, "local", 0, "spawn N processes of this binary on loopback and check that they agree")
	fs.IntVar(&o.reorderRank, "reorder-rank", -1, "with --local: the rank whose program is reordered")
	fs.IntVar(&o.skewRank, "skew-rank", -1, "with --local: the rank that reports a different libnrt git hash")
	fs.IntVar(&o.faultRank, "fault-rank", -1, "with --local: the rank that gets "+envFault+" (a test hook)")
	if rc := parse(fs, args); rc >= 0 {
		return rc
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(errw, "nrtabi bootstrap: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	o.fault = os.Getenv(envFault)
	if o.local != 0 {
		if err := tcp.CheckWorldSize("--local", o.local); err != nil {
			fmt.Fprintf(errw, "nrtabi bootstrap: %v\n", err)
			return exitUsage
		}
		return runLocal(o, out, errw)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := o.resolveRank(set, os.Getenv); err != nil {
		fmt.Fprintf(errw, "nrtabi bootstrap: %v\n", err)
		return exitUsage
	}
	if o.program != "" && o.program != "normal" && o.program != "reordered" {
		fmt.Fprintf(errw, "nrtabi bootstrap: program %q: use normal or reordered\n", o.program)
		return exitUsage
	}
	if o.rootID == "" {
		fmt.Fprintf(errw, "nrtabi bootstrap: no root comm id: set %s (or --root) to <ipv4>:<port> | [<ipv6>]:<port> | <hostname>:<port>\n", abi.EnvRootCommID)
		return exitUsage
	}
	return runRank(o, out, errw)
}

// resolveRank fills rank and nranks from the flags, else a launcher's environment.
func (o *bootstrapOpts) resolveRank(set map[string]bool, getenv func(string) string) error {
	if !set["rank"] || !set["nranks"] {
		for _, l := range launchers {
			r, s := getenv(l.rank), getenv(l.size)
			if r == "" && s == "" {
				continue
			}
			if r == "" || s == "" {
				return fmt.Errorf("%s environment: %s=%q, %s=%q: both are needed", l.name, l.rank, r, l.size, s)
			}
			ri, err1 := strconv.Atoi(r)
			si, err2 := strconv.Atoi(s)
			if err1 != nil || err2 != nil {
				return fmt.Errorf("%s environment: %s=%q, %s=%q are not numbers", l.name, l.rank, r, l.size, s)
			}
			if !set["rank"] {
				o.rank = ri
			}
			if !set["nranks"] {
				o.nranks = si
			}
			break
		}
	}
	if o.rank < 0 || o.nranks < 1 {
		return fmt.Errorf("no rank and world size: give --rank and --nranks, or run under torchrun (RANK/WORLD_SIZE), Open MPI (OMPI_COMM_WORLD_RANK/_SIZE) or Slurm (SLURM_PROCID/SLURM_NTASKS)")
	}
	if err := tcp.CheckWorldSize("world size", o.nranks); err != nil {
		return err
	}
	if o.rank >= o.nranks {
		return errors.New(cfmt.Sprintf(abi.MsgNccomInvalidRank, o.rank, o.nranks))
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

// runRank is one rank: the world over TCP, then the replica group.
func runRank(o bootstrapOpts, out, errw io.Writer) int {
	level := slog.LevelInfo
	if o.verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(errw, &slog.HandlerOptions{Level: level})).With("rank", o.rank)
	res := worldprog.NewReport(o.rank, o.nranks)
	finish := func(err error) int {
		res.Err = err
		res.TDone = time.Now()
		fmt.Fprintln(out, res.Line(o.timing))
		if err != nil {
			var ce *tcp.CommIDError
			if errors.As(err, &ce) {
				log.Error(err.Error(), "cause", ce.Cause)
			} else {
				log.Error("bootstrap failed", "err", err)
			}
			return exitError
		}
		return exitOK
	}

	cfg, err := tcp.ConfigFromEnv(os.Getenv)
	if err != nil {
		return finish(err)
	}
	cfg.Logger = log
	// libnrt's answers come from the runtime (its device layer and version);
	// --vnc-count overrides the regime for this process.
	cfg.VNC = nrt.BootstrapIdentity{}
	if o.vnc != 0 {
		cfg.VNC = tcp.FixedVNC(o.vnc)
	}
	cfg.Versions = nrt.BootstrapIdentity{NRTGit: o.nrtGit}
	if cfg.Hooks, err = faultHooks(o.fault); err != nil {
		fmt.Fprintf(errw, "nrtabi bootstrap: %v\n", err)
		return exitUsage
	}
	n := tcp.NewNet(cfg)
	rootAddr, err := tcp.ParseRootID(o.rootID, n.Timeout())
	if err != nil {
		return finish(err)
	}
	if o.hold {
		fmt.Fprintln(out, "ready")
		_, _ = io.Copy(io.Discard, os.Stdin)
	}
	res.TStart = time.Now()
	if o.naive {
		return finish(runNaive(n, o, rootAddr, res))
	}

	var root *tcp.Root
	if o.rank == 0 {
		log.Info(cfmt.Sprintf(abi.MsgNccomRootFromEnv, o.rootID))
		if ln, lerr := inheritedRootListener(); lerr != nil {
			return finish(lerr)
		} else if ln != nil {
			root, err = n.CreateRootOn(ln, o.nranks, true)
		} else {
			root, err = n.CreateRoot(rootAddr, o.nranks, true)
		}
		if err != nil {
			return finish(err)
		}
		// The root outlives this rank's failure until the others have heard of it.
		defer root.Wait()
	}
	world, err := n.InitComm(rootAddr, o.rank, o.nranks, true)
	if err != nil {
		if root != nil {
			// In the default framing the root's verdict reaches the ranks
			// only as a closed connection; the rank serving it says why.
			if rerr := root.Wait(); rerr != nil {
				err = fmt.Errorf("%w; the root this rank serves: %v", err, rerr)
			}
		}
		return finish(err)
	}
	if world == nil {
		res.UID = "none(single-vNC)"
		log.Info("nothing to bootstrap", "nrt_get_total_vnc_count", o.vnc)
		return finish(nil)
	}
	defer world.Close()
	res.TBoot = time.Now()
	res.Prev, res.Next, res.Cluster = world.Prev(), world.Next(), world.ClusterID()

	comms := &timedComms{Comms: tcp.NewComms(n)}
	defer comms.Close()
	rt, err := collectives.New(bootstrapCore{}, comms, collectives.Options{Logger: log})
	if err != nil {
		return finish(err)
	}
	defer rt.Close()
	if err := rt.InitGlobalComm(0, uint32(o.rank), uint32(o.nranks), 0, o.rootID, true); err != nil {
		return finish(err)
	}
	if err := rt.SetupGlobalComm(0, 0, world); err != nil {
		return finish(err)
	}
	c := worldGroup(o)
	if err := rt.CalculateSignature(0, 0, c); err != nil {
		return finish(err)
	}
	node, err := rt.GetNcclComm(&c.ReplicaGroups[0], 0, 0, 1, false)
	res.TAgree = comms.lastInit
	if err != nil {
		return finish(err)
	}
	cm := comms.Comm(node.Comm())
	if cm == nil {
		return finish(fmt.Errorf("the replica group's comm handle %#x is unknown", node.Comm()))
	}
	ap, err := tcp.RootAddr(&cm.ID)
	if err != nil {
		return finish(err)
	}
	res.UID = ap.String()
	if root != nil {
		if err := root.Wait(); err != nil {
			return finish(err)
		}
	}
	return finish(nil)
}

// worldGroup is the context of this rank's program (worldprog.Context).
func worldGroup(o bootstrapOpts) *collectives.Context {
	return worldprog.Context(o.rank, o.nranks, o.program == "reordered")
}

// timedComms notes when the last comm init began: for the replica group
// that is the moment its signature verdict and unique id are agreed.
type timedComms struct {
	*tcp.Comms
	lastInit time.Time
}

func (t *timedComms) InitComm(rankN int, id *collectives.UniqueID, rank int, bypassGraph bool) (uintptr, error) {
	t.lastInit = time.Now()
	return t.Comms.InitComm(rankN, id, rank, bypassGraph)
}

// runNaive is the benchmark's peer: one everyone-to-root gather that
// reaches the same agreement (addresses, verdict, unique id).
func runNaive(n *tcp.Net, o bootstrapOpts, rootAddr netip.AddrPort, res *worldprog.Report) error {
	var root *tcp.Root
	if o.rank == 0 {
		ln, err := inheritedRootListener()
		if err != nil {
			return err
		}
		if ln != nil {
			root = n.NaiveRootOn(ln, o.nranks)
		} else if root, err = n.NaiveRoot(rootAddr, o.nranks); err != nil {
			return err
		}
	}
	c := worldGroup(o)
	if err := collectives.Sign(c, uint32(o.rank)); err != nil {
		return err
	}
	got, err := n.NaiveJoin(rootAddr, o.rank, o.nranks, c.Signature)
	if err != nil {
		return err
	}
	res.TBoot, res.TAgree = time.Now(), time.Now()
	res.Prev, res.Next = (o.rank-1+o.nranks)%o.nranks, (o.rank+1)%o.nranks
	ap, err := tcp.RootAddr(&got.ID)
	if err != nil {
		return err
	}
	res.UID = ap.String()
	if root != nil {
		if err := root.Wait(); err != nil {
			return err
		}
	}
	if !got.Valid {
		return errors.New(cfmt.Sprintf(abi.MsgSigValidationFailed, uint32(o.rank)))
	}
	return nil
}

// faultHooks turns NRTABI_BOOTSTRAP_FAULT into the misbehaviour of one rank.
func faultHooks(kind string) (*tcp.Hooks, error) {
	die := func() {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	short := func(frame []byte) []byte { return frame[:len(frame)-abi.SizeofNcclNRTGitHash] }
	switch kind {
	case "":
		return nil, nil
	case "bad-magic":
		return &tcp.Hooks{WriteRecord: func(c net.Conn, frame []byte, payload int) error {
			binary.LittleEndian.PutUint32(frame[payload:], ^abi.BootstrapSanity)
			_, err := c.Write(frame)
			return err
		}}, nil
	case "truncated-record":
		return &tcp.Hooks{WriteRecord: func(c net.Conn, frame []byte, _ int) error {
			_, _ = c.Write(short(frame))
			c.Close()
			return fmt.Errorf("fault injected (%s=%s): sent %d of the %d bytes of the INFO_TO_ROOT frame", envFault, kind, len(short(frame)), len(frame))
		}}, nil
	case "die-mid-record":
		return &tcp.Hooks{WriteRecord: func(c net.Conn, frame []byte, _ int) error {
			_, _ = c.Write(short(frame))
			die()
			return nil
		}}, nil
	case "die-after-record":
		return &tcp.Hooks{WriteRecord: func(c net.Conn, frame []byte, _ int) error {
			_, _ = c.Write(frame)
			die()
			return nil
		}}, nil
	case "die-after-reply":
		return &tcp.Hooks{AfterReply: die}, nil
	}
	return nil, fmt.Errorf("%s=%q: use bad-magic, truncated-record, die-mid-record, die-after-record or die-after-reply", envFault, kind)
}

// inheritedRootListener returns the root socket the --local launcher passed
// down (envRootFD), or nil when this process binds its own.
func inheritedRootListener() (*net.TCPListener, error) {
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
