package main

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/netip"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
)

// The TCP bootstrap step: four real processes of this binary form a world
// on loopback and agree; then one of them posts a reordered program and all
// four refuse the world.
func init() {
	addDemoStep(demoStep{order: 90, title: "bootstrap over TCP: 4 processes on loopback agree, then one reordered program fails all 4", run: demoBootstrap})
}

func demoBootstrap(d *demoEnv) error {
	o := bootstrapOpts{local: 4, reorderRank: -1, skewRank: -1, faultRank: -1, childEnv: []string{abi.EnvSockTimeout + "=5"}}
	ranks, sum, err := spawnLocal(o, io.Discard)
	if err != nil {
		return err
	}
	d.printf("nrtabi bootstrap --local 4 (every rank a process; %s=127.0.0.1:<a free port>):", abi.EnvRootCommID)
	for _, r := range ranks {
		d.printf("  %s", r.fields["line"])
	}
	d.printf("%s", sum.text)
	if !sum.ok {
		return fmt.Errorf("the 4-rank world did not agree")
	}
	ap, err := netip.ParseAddrPort(ranks[0].fields["unique_id"])
	if err != nil {
		return fmt.Errorf("rank 0's unique id %q: %v", ranks[0].fields["unique_id"], err)
	}
	id := tcp.NewUniqueID(ap)
	d.printf("the agreed ncclUniqueId starts with the root's sockaddr_in (%d of %d bytes): %s",
		abi.NcclSocketAddressSize, abi.NcclUniqueIDBytes, hex.EncodeToString(id[:abi.NcclSocketAddressSize]))

	o.reorderRank = 2
	ranks, sum, err = spawnLocal(o, io.Discard)
	if err != nil {
		return err
	}
	d.printf("nrtabi bootstrap --local 4 --reorder-rank 2:")
	for _, r := range ranks {
		d.printf("  rank %d: exit %d: %s", r.rank, r.exit, r.fields["error"])
		if want := cfmt.Sprintf(abi.MsgSigValidationFailed, uint32(r.rank)); r.exit == 0 || r.fields["error"] != want {
			return fmt.Errorf("rank %d: exit %d %q, want a failure with %q", r.rank, r.exit, r.fields["error"], want)
		}
	}
	if sum.ok {
		return fmt.Errorf("the world with a reordered program was accepted")
	}
	return nil
}
