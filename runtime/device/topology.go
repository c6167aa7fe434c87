package device

import (
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"

	"github.com/nrtabi/nrtabi/internal/cfmt"
)

// Topology is the simulated device layer: a fixed description of one
// instance read from a TOML file (see LoadTopology). It implements Layer and
// IdentitySource and is immutable once loaded, so any number of threads may
// query it.
type Topology struct {
	file string
	abi  ABI

	inst      Instance
	vcoreSize uint32
	vss       uint32
	remap     []int
	regime    string

	podType   string
	podSize   uint32
	podNode   uint32
	reservID  uint64
	devices   []deviceRow
	mlas      []mlaRow
	cores     []coreRow
	deviceIdx map[int]int // device id -> row
	mlaIdx    map[int]int // MLA index -> row
	ridIdx    map[int]int // routing id -> row
}

type deviceRow struct {
	id        int
	bdf       BDF
	mla       int
	available bool
}

type mlaRow struct {
	id, rid, hostDeviceID int
	available             bool
	peers                 []int
}

type coreRow struct {
	device int
	vtpb   uint32
}

// noVtpb is what a core without a vtpb reports (-1 as a u32).
const noVtpb = math.MaxUint32

var _ Layer = (*Topology)(nil)

// File is where the topology was read from.
func (t *Topology) File() string { return t.file }

// CoreIdentity describes virtual core vnc.
func (t *Topology) CoreIdentity(vnc uint32) (Identity, error) {
	if int64(vnc) >= int64(len(t.cores)) {
		return Identity{}, fmt.Errorf("%s (%s has %d cores)", cfmt.Sprintf(t.abi.MsgNoCore, vnc), t.file, len(t.cores))
	}
	c := t.cores[vnc]
	d := t.devices[t.deviceIdx[c.device]]
	m := t.mlas[t.mlaIdx[d.mla]]
	return Identity{
		NecDev: d.id, MLAIdx: m.id, HostDeviceID: m.hostDeviceID, RoutingID: m.rid, VtpbIdx: c.vtpb,
		PodType: t.abi.PodTypes[t.podType], PodNodeID: t.podNode, PodSize: t.podSize, ReservationID: t.reservID,
	}, nil
}

// VirtualServerSize is the configured virtual-server partition size.
func (t *Topology) VirtualServerSize() uint32 { return t.vss }

// Devices lists the available devices in id order.
func (t *Topology) Devices() []int {
	var ids []int
	for _, d := range t.devices {
		if d.available {
			ids = append(ids, d.id)
		}
	}
	slices.Sort(ids)
	return ids
}

func (t *Topology) device(dev int) (*deviceRow, error) {
	i, ok := t.deviceIdx[dev]
	if !ok {
		return nil, fmt.Errorf("no device %d in %s", dev, t.file)
	}
	return &t.devices[i], nil
}

func (t *Topology) mla(mla int) (*mlaRow, error) {
	i, ok := t.mlaIdx[mla]
	if !ok {
		return nil, fmt.Errorf("no MLA %d in %s", mla, t.file)
	}
	return &t.mlas[i], nil
}

// PCIBDF is device dev's PCI address.
func (t *Topology) PCIBDF(dev int) (BDF, error) {
	d, err := t.device(dev)
	if err != nil {
		return BDF{}, err
	}
	return d.bdf, nil
}

// VirtualCoreSize is instance.vcore_size.
func (t *Topology) VirtualCoreSize() (uint32, error) { return t.vcoreSize, nil }

// PortMap lists, per port of dev's MLA, the peer MLA and its host device id.
func (t *Topology) PortMap(dev int) ([]Port, error) {
	d, err := t.device(dev)
	if err != nil {
		return nil, err
	}
	m, _ := t.mla(d.mla)
	ports := make([]Port, len(m.peers))
	for i, p := range m.peers {
		ports[i] = Port{MLA: -1, HostDeviceID: -1}
		if p >= 0 {
			ports[i] = Port{MLA: p, HostDeviceID: t.mlas[t.mlaIdx[p]].hostDeviceID}
		}
	}
	return ports, nil
}

// MLAAvailable reports whether mla exists and is available; dev must exist.
func (t *Topology) MLAAvailable(dev, mla int) bool {
	if _, err := t.device(dev); err != nil {
		return false
	}
	m, err := t.mla(mla)
	return err == nil && m.available
}

// MLAToRID is mla's routing id.
func (t *Topology) MLAToRID(dev, mla int) (int, error) {
	if _, err := t.device(dev); err != nil {
		return -1, err
	}
	m, err := t.mla(mla)
	if err != nil {
		return -1, err
	}
	return m.rid, nil
}

// RIDToMLA is the MLA with routing id rid.
func (t *Topology) RIDToMLA(dev, rid int) (int, error) {
	if _, err := t.device(dev); err != nil {
		return -1, err
	}
	i, ok := t.ridIdx[rid]
	if !ok {
		return -1, fmt.Errorf("no MLA with routing id %d in %s", rid, t.file)
	}
	return t.mlas[i].id, nil
}

// RemapsPorts is true for this instance's family number when the family is
// one of trn2* or trn3*.
func (t *Topology) RemapsPorts(family uint32) bool {
	return family == t.inst.FamilyID && remapsPorts(t.inst.Family)
}

func remapsPorts(family string) bool {
	return strings.HasPrefix(family, "trn2") || strings.HasPrefix(family, "trn3")
}

// Port applies instance.port_remap; a port beyond it is returned unchanged.
func (t *Topology) Port(mla, port int) (int, error) {
	if _, err := t.mla(mla); err != nil {
		return -1, err
	}
	if port < 0 {
		return -1, fmt.Errorf("negative port %d", port)
	}
	if port < len(t.remap) {
		return t.remap[port], nil
	}
	return port, nil
}

// PeerMLA is mla.peers[port].
func (t *Topology) PeerMLA(dev, mla, port int) (int, error) {
	if _, err := t.device(dev); err != nil {
		return -1, err
	}
	m, err := t.mla(mla)
	if err != nil {
		return -1, err
	}
	if port < 0 || port >= len(m.peers) {
		return -1, fmt.Errorf("MLA %d has no port %d (it has %d)", mla, port, len(m.peers))
	}
	return m.peers[port], nil
}

// P2PPodPeerNode: the nodes of a P2P pod form a ring; the peer is distance
// nodes further along it.
func (t *Topology) P2PPodPeerNode(dev uint32, node int, distance uint32) (int, error) {
	if _, err := t.device(int(dev)); err != nil {
		return -1, err
	}
	if t.podType != "p2p" {
		return -1, fmt.Errorf("the pod in %s is %q, not a P2P pod", t.file, t.podType)
	}
	if node < 0 || uint32(node) >= t.podSize {
		return -1, fmt.Errorf("pod node %d is outside the pod of size %d", node, t.podSize)
	}
	return int((uint64(node) + uint64(distance)) % uint64(t.podSize)), nil
}

// PodNodeCanAccess: without a pod a core reaches only its own node; in a P2P
// pod its own node and the two ring neighbours; behind a switch every node.
// Routing ids do not restrict access in the simulation.
func (t *Topology) PodNodeCanAccess(podType, localRID, localNode, remoteRID, remoteNode uint32) (bool, error) {
	name := ""
	for _, n := range []string{"none", "p2p", "switch"} {
		if v, ok := t.abi.PodTypes[n]; ok && v == podType {
			name = n
		}
	}
	if name == "" {
		return false, fmt.Errorf("pod type %d is not one of none, p2p, switch", podType)
	}
	if name == "none" {
		return localNode == remoteNode, nil
	}
	if localNode >= t.podSize || remoteNode >= t.podSize {
		return false, fmt.Errorf("pod nodes %d and %d must be below the pod size %d", localNode, remoteNode, t.podSize)
	}
	if name == "switch" {
		return true, nil
	}
	// In 64 bits: remote + size - local overflows u32 once the pod passes
	// 2^31 nodes, and the wrapped distance would answer a->b and b->a apart.
	size := uint64(t.podSize)
	d := (uint64(remoteNode) + size - uint64(localNode)) % size
	return d == 0 || d == 1 || d == size-1, nil
}

// Printk logs msg at INFO as the driver log would record it.
func (t *Topology) Printk(msg string, action uint32) {
	slog.Info("ndl_printk", "text", msg, "action", action)
}

// Instance is the [instance] table.
func (t *Topology) Instance() Instance { return t.inst }

// TotalVNCCount is the number of [[core]] rows.
func (t *Topology) TotalVNCCount() uint32 { return uint32(len(t.cores)) }

// The two regimes of [instance] vnc_regime. libnccom reads
// nrt_get_total_vnc_count() != 0 as "single vNC: nothing to bootstrap"
// (docs/sources.md#s001-3-gotcha), so the topology, not the core count, decides.
const (
	RegimeDistributed = "distributed"
	RegimeSingleVNC   = "single-vnc"
)

// Regime is the topology's vNC regime.
func (t *Topology) Regime() string { return t.regime }

// ReportedVNCCount is what nrt_get_total_vnc_count answers: 0 in the
// distributed regime (the default), the number of cores in the single-vNC one.
func (t *Topology) ReportedVNCCount() uint32 {
	if t.regime == RegimeSingleVNC {
		return t.TotalVNCCount()
	}
	return 0
}
