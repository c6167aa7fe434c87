package main

/*
#include <stddef.h>
#include <stdint.h>
typedef const char nrtabi_cchar;
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"
	"unsafe"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
	"github.com/nrtabi/nrtabi/runtime/collectives"
	"github.com/nrtabi/nrtabi/runtime/device"
	"github.com/nrtabi/nrtabi/runtime/nrt"
	"github.com/nrtabi/nrtabi/runtime/transport/nccl"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// nrtabi_bootstrap_world runs one rank of a world through the boundary, as
// libnrt drives libnccom: neuronInitGlobalComm over TCP (root_id names the
// root; rank 0 serves it), then the per-NC bootstrap of one replica group
// spanning the world (runtime/collectives: signature AND up a binary tree,
// unique id down a hypercube) over the ncclBootstrapSend/Recv trampolines,
// and neuronInitComm of the agreed id. reordered posts the reordered program.
// The report line (worldprog.Report) goes to line; the status is the call's.
//
//export nrtabi_bootstrap_world
func nrtabi_bootstrap_world(rank, nranks C.int, rootID *C.nrtabi_cchar, reordered C.int, line *C.char, n C.size_t) C.uint32_t {
	res := worldprog.NewReport(int(rank), int(nranks))
	res.TStart = time.Now()
	err := bootstrapWorld(res, goString(rootID), reordered != 0)
	res.Err = err
	if res.TDone.IsZero() {
		res.TDone = time.Now()
	}
	putString(line, n, res.Line(true))
	if err != nil {
		slog.Error("bootstrap world failed", "rank", int(rank), "err", err)
	}
	return C.uint32_t(nrt.StatusOf(err))
}

// recordingComms notes the unique id the replica group's comm was built
// from, and when that began (the moment the group agreed).
type recordingComms struct {
	*nrt.Comms
	id       collectives.UniqueID
	lastInit time.Time
}

func (c *recordingComms) InitComm(rankN int, id *collectives.UniqueID, rank int, bypassGraph bool) (uintptr, error) {
	c.lastInit = time.Now()
	c.id = *id
	return c.Comms.InitComm(rankN, id, rank, bypassGraph)
}

func bootstrapWorld(res *worldprog.Report, rootID string, reordered bool) error {
	if !nrt.CurrentState().Initialised {
		return errors.New("nrtabi_bootstrap_world: call nrtabi_init first")
	}
	if res.NRanks < 1 || res.Rank < 0 || res.Rank >= res.NRanks {
		return fmt.Errorf("nrtabi_bootstrap_world: rank %d is not a rank of a world of %d", res.Rank, res.NRanks)
	}
	held, err := heldWorld()
	if err != nil {
		return err
	}
	ids, ok := nrt.Device().(device.IdentitySource)
	if !ok {
		return errors.New("nrtabi_bootstrap_world: the device layer describes no cores")
	}
	core, err := ids.CoreIdentity(0)
	if err != nil {
		return err
	}
	// The Go ranks' launch fills the same fields (runtime/launch
	// coreDeviceInfo): the peer records of a mixed world match.
	dev := nrt.DeviceInfo{NECDevID: int32(core.NecDev), MLAIdx: int32(core.MLAIdx), HostDeviceID: int32(core.HostDeviceID),
		PodType: abi.NECPodType(core.PodType)}
	state, err := nrt.InitGlobalComm(res.Rank, res.NRanks, &dev, rootID, "nrtabi_bootstrap_world")
	if err != nil {
		return err
	}
	defer nrt.FreeComm(state)
	info, err := nrt.GetCommInfo(state)
	if err != nil {
		return err
	}
	res.TBoot = time.Now()
	res.Prev, res.Next = (res.Rank-1+res.NRanks)%res.NRanks, (res.Rank+1)%res.NRanks
	res.Cluster = info.ClusterID

	comms := &recordingComms{Comms: &nrt.Comms{Device: &dev}}
	// enc_init's ncclInit is the handoff nrtabi_init ran; Init reports that
	// run's outcome (it runs once per process).
	rt, err := collectives.New(ids, comms, collectives.Options{NcclInit: func() error {
		_, err := nrt.Init(nrt.Options{})
		return err
	}})
	if err != nil {
		return err
	}
	defer rt.Close()
	if err := rt.InitGlobalComm(0, uint32(res.Rank), uint32(res.NRanks), 0, rootID, true); err != nil {
		return err
	}
	tr, err := nccl.New(nrt.Bootstrap{}, unsafe.Pointer(state), res.Rank, res.NRanks, "get_nccl_comm")
	if err != nil {
		return err
	}
	boot, err := withShape(tr, res.NRanks)
	if err != nil {
		return err
	}
	if err := rt.SetupGlobalComm(core.NecDev, 0, boot); err != nil {
		return err
	}
	c := worldprog.Context(res.Rank, res.NRanks, reordered)
	if err := rt.CalculateSignature(core.NecDev, 0, c); err != nil {
		return err
	}
	// libnrt's own path, as enc_init_comm takes it: nccl_init_comm, which
	// runs get_nccl_comm and binds the group's enc_comm.
	_, res.Bound, err = worldprog.InitGroupComm(rt, c, core.NecDev, 0)
	res.TAgree = comms.lastInit
	if err != nil {
		return err
	}
	uid, err := tcp.DescribeUniqueID(&comms.id)
	if err != nil {
		return err
	}
	res.UID = uid
	return holdAgreed(res, held)
}

// heldWorld reads worldprog.EnvHold: 1 holds, unset does not.
func heldWorld() (bool, error) {
	switch v := os.Getenv(worldprog.EnvHold); v {
	case "":
		return false, nil
	case "1":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%s: set it to 1 (hold the agreed world until the launcher closes stdin) or leave it unset", worldprog.EnvHold, cfmt.Escape(v, 32))
	}
}

// holdAgreed keeps a held world's comms up (worldprog.EnvHold, set by
// worldprog.LaunchHeld for the bench's C rows) once this rank agreed: it
// says so on stdout, its report line being printed only after the
// teardown, and waits, at most the socket timeout, for the launcher to
// close its stdin (worldprog/hold.go).
func holdAgreed(res *worldprog.Report, held bool) error {
	if !held {
		return nil
	}
	cfg, err := tcp.ConfigFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	timeout := cfg.SockTimeout()
	res.TDone = time.Now()
	if _, err := fmt.Fprintln(os.Stdout, worldprog.AgreedLine); err != nil {
		return err
	}
	return worldprog.NewHold(os.Stdin).End(context.Background(), timeout)
}

// shapedTransport is the libnccom bootstrap transport with its world's
// 2-tier shape, so get_nccl_comm's exchanges over it take the instances
// (runtime/collectives hierexchange.go) exactly when the Go ranks' over
// their tcp.Endpoint do: a mixed world's ranks must all pick one shape.
type shapedTransport struct {
	*nccl.Transport
	l int // 0: flat
}

func (t shapedTransport) Hier() (bool, int) { return t.l > 0, t.l }

// withShape gives tr the shape libnccom's bootstrapInit chose for this
// global init: it reads the same variable (hier.c nccom_per_instance) and
// takes the same dispatch (tcp.Hierarchical, contradiction
// bootstrap-dispatch); a hierarchical root has already refused any rank
// whose L differs.
func withShape(tr *nccl.Transport, nranks int) (shapedTransport, error) {
	l, err := tcp.ParsePerInstance(abi.EnvBootstrapPerInstance, os.Getenv(abi.EnvBootstrapPerInstance))
	if err != nil {
		return shapedTransport{}, err
	}
	if !tcp.Hierarchical(true, nranks, l) {
		l = 0
	}
	return shapedTransport{Transport: tr, l: l}, nil
}
