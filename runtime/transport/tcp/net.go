package tcp

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
)

// Net is one process's bootstrap network (libnccom's bootstrapNetInit
// state): the configuration and, once chosen, the interface every bootstrap
// socket of the process listens on. The first Init picks it — on the root's
// subnet when a root is known — and later calls reuse it, as the C library
// initialises its bootstrap network once.
type Net struct {
	cfg Config
	log *slog.Logger

	mu    sync.Mutex
	iface *Interface
}

// NewNet prepares a bootstrap network with cfg (zero fields take defaults).
func NewNet(cfg Config) *Net {
	cfg.fill()
	return &Net{cfg: cfg, log: cfg.Logger}
}

// Timeout is the socket timeout every operation is bounded by.
func (n *Net) Timeout() time.Duration { return n.cfg.Timeout }

// PerInstance is the network's L (Config.PerInstance; 0: unset).
func (n *Net) PerInstance() int { return n.cfg.PerInstance }

// Init is bootstrapNetInit: it picks the listening interface (honouring
// CCOM_SOCKET_IFNAME and CCOM_SOCKET_FAMILY; preferring root's subnet when
// root is valid) the first time and returns it every time.
func (n *Net) Init(root netip.Addr) (Interface, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.iface != nil {
		return *n.iface, nil
	}
	fam, err := parseFamily(n.cfg.Family)
	if err != nil {
		return Interface{}, err
	}
	if n.cfg.IfName != "" {
		n.log.Info(cfmt.Sprintf(abi.MsgNccomIfnameFromEnv, n.cfg.IfName))
	}
	if n.cfg.Family != "" {
		n.log.Info(cfmt.Sprintf(abi.MsgNccomFamilyFromEnv, n.cfg.Family))
	}
	list, err := n.cfg.interfaces()
	if err != nil {
		return Interface{}, err
	}
	i, err := selectInterface(list, n.cfg.IfName, fam, root)
	if err != nil {
		n.log.Error(err.Error(), abi.EnvSocketIfname, n.cfg.IfName, abi.EnvSocketFamily, n.cfg.Family, "root", root)
		return Interface{}, err
	}
	n.log.Info(cfmt.Sprintf(abi.MsgNccomBootstrapUsing, fmt.Sprintf(" %s<0>", i)))
	n.log.Debug(cfmt.Sprintf(abi.MsgNccomSockTimeout, int(n.cfg.Timeout/time.Second)))
	n.iface = &i
	return i, nil
}

// vncGate is nrt_get_total_vnc_count(): non-zero means no bootstrap.
func (n *Net) vncGate() (uint32, error) {
	c, err := n.cfg.VNC.TotalVNCCount()
	if err != nil {
		return 0, fmt.Errorf("nrt_get_total_vnc_count: %w", err)
	}
	return c, nil
}

// ListenPlain listens on addr with a plain TCP socket. Go's listeners ask
// for Multipath TCP by default (Go 1.24, GODEBUG multipathtcp), and on a
// kernel with net.mptcp.enabled=1 every rank's listener was an MPTCP
// socket, whose accepts of the peers' plain TCP connections (the reference
// libnccom and the Go dialers never ask for MPTCP) cost more and buy
// nothing: the bootstrap is one TCP connection per link, as upstream's.
// At 256 ranks the MPTCP listen was a fifth of each rank's bootstrap setup
// (docs/benchmarks.md#the-agree-phase-s-cpu-2026-12-04).
func ListenPlain(addr netip.AddrPort) (*net.TCPListener, error) {
	// Accepted sockets without TCP keepalive, as dialWatching's (frame.go).
	lc := net.ListenConfig{KeepAlive: -1}
	lc.SetMultipathTCP(false)
	l, err := lc.Listen(context.Background(), "tcp", net.TCPAddrFromAddrPort(addr).String())
	if err != nil {
		return nil, err
	}
	return l.(*net.TCPListener), nil
}
