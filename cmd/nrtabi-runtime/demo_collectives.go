package main

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/collectives"
	"github.com/nrtabi/nrtabi/runtime/device"
	"github.com/nrtabi/nrtabi/runtime/transport/inproc"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// The collectives step: eight NeuronCores of one process form a world, sign
// one replica group's program and bootstrap its comm; then one rank's program
// is reordered and every rank refuses the world.
func init() {
	addDemoStep(demoStep{order: 80, title: "collectives: 8-rank bootstrap of one replica group, then one rank reordered", run: demoCollectives})
}

const demoRanks = 8

// demoCores is the identity source of the demo: virtual core v is NeuronCore v.
type demoCores struct{}

func (demoCores) CoreIdentity(vnc uint32) (device.Identity, error) {
	if vnc >= demoRanks {
		return device.Identity{}, fmt.Errorf("virtual core %d is not one of the demo's %d", vnc, demoRanks)
	}
	return device.Identity{NecDev: int(vnc), MLAIdx: int(vnc / 2), HostDeviceID: int(vnc), RoutingID: int(vnc), VtpbIdx: vnc}, nil
}

func (demoCores) VirtualServerSize() uint32 { return 0 }

func opList(ops []collectives.Op) string {
	var s []string
	for _, op := range ops {
		s = append(s, fmt.Sprintf("%s %d KiB", strings.ToLower(strings.TrimPrefix(op.Kind.String(), "ENC_")), op.SizeN>>10))
	}
	return strings.Join(s, ", ")
}

func demoCollectives(d *demoEnv) error {
	comms := &inproc.Comms{}
	rt, err := collectives.New(demoCores{}, comms, collectives.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer rt.Close()
	w, err := inproc.NewWorld(demoRanks, inproc.Options{})
	if err != nil {
		return err
	}
	defer w.Close()
	for r := 0; r < demoRanks; r++ {
		if err := rt.InitGlobalComm(uint32(r), uint32(r), demoRanks, 0, "127.0.0.1:62182", true); err != nil {
			return err
		}
	}
	if err := demoEach(func(r int) error { return rt.SetupGlobalComm(r, 0, w.Endpoint(r)) }); err != nil {
		return err
	}
	g := rt.GlobalComm(0, 0)
	m, sem := g.Mirror(), g.SemValues()
	d.printf("%d NeuronCores, one process, in-process transport; enc_glb_comm of core 0 (%d B in C memory): g_device_id %d of %d, sem buffer %d B = %#x, %d, %d, ... %d",
		demoRanks, abi.SizeofEncGlbComm, m.GDeviceID, m.GDeviceCnt, m.IncRecvSemValuesBufferSize, sem.Header, sem.Values[0], sem.Values[1], sem.Values[abi.SemIncValues-1])
	parts := make([]uint32, demoRanks)
	for i := range parts {
		parts[i] = uint32(i)
	}
	d.printf("replica group 1 (send/recv, rank %d), %d participants: %s", abi.EncRgSendrecvRank, demoRanks, opList(worldprog.Ops(false)))

	for _, run := range []struct {
		title     string
		reordered int // the rank whose program is reordered, or -1
	}{{"every rank posts the same program", -1}, {"rank 5 swaps reduce-scatter and all-gather", 5}} {
		w.ResetStats()
		inits := comms.Stats().Inits
		sigs := make([][16]byte, demoRanks)
		nodes := make([]*collectives.CommNode, demoRanks)
		errs := make([]error, demoRanks)
		var wg sync.WaitGroup
		for r := 0; r < demoRanks; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := &collectives.Context{
					ReplicaGroups: []collectives.ReplicaGroup{{Rank: abi.EncRgSendrecvRank, RankN: demoRanks, GroupID: 1, SrcTargetPairsID: -1,
						Participants: parts, BootstrapParticipants: parts, BootstrapRank: r}},
					Ops: worldprog.Ops(r == run.reordered),
				}
				if errs[r] = rt.CalculateSignature(r, 0, c); errs[r] != nil {
					return
				}
				sigs[r] = c.ReplicaGroups[0].Signature
				nodes[r], errs[r] = rt.GetNcclComm(&c.ReplicaGroups[0], r, 0, 1, false)
			}()
		}
		wg.Wait()
		d.printf("%s:", run.title)
		failed := 0
		for r := 0; r < demoRanks; r++ {
			verdict := "ok: comm initialised"
			var e *collectives.Error
			switch {
			case errs[r] == nil:
				n := nodes[r].Mirror()
				verdict += fmt.Sprintf(", node refcnt %d, stream %d, %d local participants", n.Refcnt, n.StreamID, n.NumLocalParticipants)
			case errors.As(errs[r], &e):
				verdict = "refused: " + e.Msg
				failed++
			default:
				return errs[r]
			}
			d.printf("  rank %d  signature %x  %s", r, sigs[r][:6], verdict)
		}
		st := w.Stats()
		d.printf("  messages: %d × %d B up the tree (%d rounds), %d × %d B down the cube (%d rounds); %d comms initialised",
			st.BySize[int(abi.EncSigMsgSize)], abi.EncSigMsgSize, collectives.TreeRounds(demoRanks),
			st.BySize[int(abi.EncUIDMsgSize)], abi.EncUIDMsgSize, collectives.CubeRounds(demoRanks), comms.Stats().Inits-inits)
		want := 0
		if run.reordered >= 0 {
			want = demoRanks
		}
		if failed != want || (want > 0 && comms.Stats().Inits != inits) {
			return fmt.Errorf("%s: %d of %d ranks refused the world, expected %d", run.title, failed, demoRanks, want)
		}
		for _, n := range nodes {
			if n != nil {
				if err := rt.Release(n); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// demoEach runs f for every rank at once and returns the first failure.
func demoEach(f func(r int) error) error {
	errs := make([]error, demoRanks)
	var wg sync.WaitGroup
	for r := 0; r < demoRanks; r++ {
		wg.Add(1)
		go func() { defer wg.Done(); errs[r] = f(r) }()
	}
	wg.Wait()
	return errors.Join(errs...)
}
