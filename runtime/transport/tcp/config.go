package tcp

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// EnvFraming selects the bootstrap framing: upstream (default) or extended.
const EnvFraming = "NRTABI_BOOTSTRAP_FRAMING"

// DefaultTimeout bounds a socket operation when NEURON_CCOM_SOCK_TIMEOUT is unset.
const DefaultTimeout = time.Duration(abi.BootstrapSockTimeoutDefault) * time.Second

// Config is what the bootstrap network reads from its environment.
type Config struct {
	// Timeout bounds every connect, accept, read and write
	// (NEURON_CCOM_SOCK_TIMEOUT). 0 means DefaultTimeout.
	Timeout time.Duration
	// IfName and Family choose the listening interface (CCOM_SOCKET_IFNAME,
	// CCOM_SOCKET_FAMILY).
	IfName, Family string
	// Versions feeds the git-hash weld of a global init; nil is the spec's
	// release (SpecVersions{}).
	Versions Versions
	// VNC is nrt_get_total_vnc_count(); nil reports 0, the distributed regime.
	VNC VNCCounter
	// Logger receives progress and failures; nil is slog.Default().
	Logger *slog.Logger
	// Extended selects nrtabi's extended framing ({u32 type, u32 length}
	// frames, a root link kept open, ABORTs naming the failed peer to every
	// rank; NRTABI_BOOTSTRAP_FRAMING=extended). The default is upstream NCCL
	// 2.9's framing, which the reference libnccom speaks.
	Extended bool
	// Bidirectional runs every ring of the bootstrap both ways round,
	// halving its steps (NRTABI_BOOTSTRAP_RING=bidirectional;
	// docs/bootstrap-hierarchy.md#bidirectional-ring-all-gather). Every rank of a
	// world must have the same; false is upstream 2.9's one-way ring.
	Bidirectional bool
	// PerInstance is L, the ranks of one instance (vncPerInstance;
	// NRTABI_BOOTSTRAP_PER_INSTANCE): a global world of more ranks takes the
	// hierarchical bootstrap (docs/bootstrap-hierarchy.md). 0 is unset: flat.
	PerInstance int
	// Hooks plant faults (tests); nil in normal use.
	Hooks *Hooks
	// Device is the enc_neuron_device_info_t libnrt hands libnccom's comm
	// init: the peer record's cudaDev, mla_idx, compCap and hostHash's
	// virtual_server_id, and a global init's pod_type (PeerRecord,
	// GlobalMaps). The zero value is device 0, MLA 0, no pod.
	Device abi.EncNeuronDeviceInfo

	interfaces func() ([]hostInterface, error) // nil: the system's
	// procHashes replaces getHostHash() and getPidHash() (tests); nil:
	// this process's (processHashes).
	procHashes func() (host, pid uint64)
	// plantRange replaces the range a root claims on the roots' ring
	// (tests: a planted bug the next root must catch); nil: the rule's.
	plantRange func(lo, count int) (int, int)
	// plantDialDelay holds a root's dial of the next root back (tests
	// only): the root fails before its own dial is through.
	plantDialDelay time.Duration
	// plantCompleteEarly makes an extended multi-root root send COMPLETE
	// once its own range's ranks sent RING_DONE, not waiting for the
	// other ranges (it still waits for them before it ends; tests only:
	// the barrier TestCompleteWaitsForEveryRange shows is needed).
	plantCompleteEarly bool
}

func (c *Config) hashes() (host, pid uint64) {
	if c.procHashes != nil {
		return c.procHashes()
	}
	return processHashes()
}

// Hooks let a test make one rank misbehave at a precise point of the
// handshake, in a real process.
type Hooks struct {
	// WriteRecord replaces the write of the INFO_TO_ROOT frame (header and
	// payload, as the rank would send it; the payload starts at offset
	// payload).
	WriteRecord func(c net.Conn, frame []byte, payload int) error
	// AfterReply runs when the root's INFO_FROM_ROOT has arrived.
	AfterReply func()
	// GatherPhase runs as a hierarchical all-gather enters a phase
	// ("intra", "inter", "down") — where a test kills a leader or a
	// non-leader mid-gather.
	GatherPhase func(phase string)
	// RingStep runs before each step of a ring all-gather (phase a
	// BOOTSTRAP_PHASE_*, me this rank's listen address); true makes this
	// rank die there as a killed process would to its peers: every socket
	// reset at once (RST), the init returning errPlantedDeath.
	RingStep func(phase uint32, step int, me netip.AddrPort) bool
	// Relay, when set, gives the bytes this rank sends in place of out at
	// each all-gather step and hop down an instance (rec is the record size
	// of an AllGatherRecords, 0 in a plain AllGather): where a test makes a
	// relay forge the records it passes on.
	Relay func(out []byte, rec int) []byte
	// Deaf makes this rank leave its ring links unwatched between gathers
	// (watch.go) and drop every abort frame a link brings it, waiting out
	// that read's deadline instead (framing.go deafWait): the planted fault
	// of a rank that does not hear an abort once its own gather is done,
	// which a peer that dialled it early (Endpoint.Prepare) would otherwise
	// still reach in-band.
	Deaf bool
	// AfterPeerSend runs once a point-to-point Send has delivered its
	// message: where a test kills a rank just after its gather, as
	// libnccom's die-after-p2p-send does (docs/bootstrap-hierarchy.md#abort-frames).
	AfterPeerSend func()
}

// ConfigFromEnv reads NEURON_CCOM_SOCK_TIMEOUT (whole seconds, at most
// BOOTSTRAP_SOCK_TIMEOUT_MAX: one day),
// CCOM_SOCKET_IFNAME and CCOM_SOCKET_FAMILY through getenv.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	var c Config
	if s := getenv(abi.EnvSockTimeout); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 || n > int(abi.BootstrapSockTimeoutMax) {
			// Checked before any conversion: 18446744074 s in nanoseconds
			// would wrap to 290 ms, 9223372037 s to a negative duration.
			return c, fmt.Errorf("%s=%q: give the socket timeout as whole seconds in 1..%d", abi.EnvSockTimeout, s, abi.BootstrapSockTimeoutMax)
		}
		c.Timeout = time.Duration(n) * time.Second
	}
	switch f := getenv(EnvFraming); f {
	case "", "upstream":
	case "extended":
		c.Extended = true
	default:
		return c, fmt.Errorf("%s=%q: use upstream (the default, upstream NCCL 2.9's framing) or extended (nrtabi's, which names a failed peer to every rank)", EnvFraming, f)
	}
	switch m := getenv(abi.EnvBootstrapRing); m {
	case "", "unidirectional":
	case "bidirectional":
		c.Bidirectional = true
	default:
		return c, fmt.Errorf("%s=%q: use unidirectional (the default, upstream NCCL 2.9's ring) or bidirectional (both ways round, half the steps), the same on every rank", abi.EnvBootstrapRing, m)
	}
	l, err := ParsePerInstance(abi.EnvBootstrapPerInstance, getenv(abi.EnvBootstrapPerInstance))
	if err != nil {
		return c, err
	}
	c.PerInstance = l
	c.IfName = getenv(abi.EnvSocketIfname)
	c.Family = getenv(abi.EnvSocketFamily)
	if _, err := parseFamily(c.Family); err != nil {
		return c, err
	}
	return c, nil
}

// MaxRanks is the largest world the bootstrap serves (BOOTSTRAP_MAX_RANKS):
// every rank allocates tables per rank, so a typo such as WORLD_SIZE=1e8 is
// refused up front instead of running out of memory.
const MaxRanks = int(abi.BootstrapMaxRanks)

// CheckWorldSize refuses a world size outside 1..MaxRanks, naming where it
// came from.
func CheckWorldSize(what string, n int) error {
	if n < 1 || n > MaxRanks {
		return fmt.Errorf("%s = %d: a bootstrap world has 1..%d ranks", what, n, MaxRanks)
	}
	return nil
}

// SockTimeout is what bounds each socket operation under c: Timeout, or
// DefaultTimeout when it is unset.
func (c Config) SockTimeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

func (c *Config) fill() {
	c.Timeout = c.SockTimeout()
	if c.Versions == nil {
		c.Versions = SpecVersions{}
	}
	if c.VNC == nil {
		c.VNC = FixedVNC(0)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Hooks == nil {
		c.Hooks = &Hooks{}
	}
	if c.interfaces == nil {
		c.interfaces = systemInterfaces
	}
}
