package main

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
	"github.com/nrtabi/nrtabi/runtime/builder"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// The TCP bootstrap step, through the boundary: four C host processes, each
// libnrt.so.1 -> dlopen of the reference libnccom, form a world on loopback
// and agree; one of them posts a reordered program and all four refuse; then
// a mixed world of Go `nrtabi-runtime bootstrap` ranks and C hosts agrees.
func init() {
	addDemoStep(demoStep{order: 90, title: "bootstrap over TCP through the boundary: 4 C hosts (libnrt + the reference libnccom) agree, a reordered program fails all 4, a mixed Go/C world agrees", run: demoBootstrap})
}

func demoBootstrap(d *demoEnv) error {
	b, ok := d.state["boundary"].(*boundaryDemo)
	if !ok {
		return fmt.Errorf("the boundary step did not build libnrt")
	}
	refDir := filepath.Join(d.work, "libnccom")
	p, err := b.tree.BuildLibnccom(b.lib, refDir, builder.Libnccom{})
	if err != nil {
		return err
	}
	desc, err := describeLibnrt(p)
	if err != nil {
		return err
	}
	d.printf("reference libnccom (gcc, runtime/libnccom/*.c over the generated nrtabi.h): %s", desc)
	host := filepath.Join(d.work, "worldhost")
	if err := b.tree.BuildWorldHost(host, b.lib); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	env := []string{"LD_LIBRARY_PATH=" + b.lib + ":" + refDir, abi.EnvSockTimeout + "=5", "NRTABI_LOG_LEVEL=warn"}
	run := func(what string, ms []worldprog.Member) ([]worldprog.Run, error) {
		root, err := worldprog.FreeLoopbackRoot()
		if err != nil {
			return nil, err
		}
		runs, took, err := worldprog.Launch(ms, root, env)
		if err != nil {
			return nil, err
		}
		d.printf("%s (%s=%s, %s):", what, abi.EnvRootCommID, root, took.Round(1e6))
		return runs, nil
	}

	hosts := make([]worldprog.Member, 4)
	for r := range hosts {
		hosts[r] = worldprog.WorldHost(host, false)
	}
	runs, err := run("4 C hosts, each libnrt.so.1 -> dlopen libnccom.so (the reference)", hosts)
	if err != nil {
		return err
	}
	for _, r := range runs {
		d.printf("  %s", shortLine(r.Fields))
	}
	if ok, bad := worldprog.Agreed(runs); !ok {
		return fmt.Errorf("the 4-host world did not agree: rank %d: %s\n%s", bad, runs[bad].Fields["line"], runs[bad].Stderr)
	}
	ap, err := netip.ParseAddrPort(runs[0].Fields["unique_id"])
	if err != nil {
		return fmt.Errorf("rank 0's unique id %q: %v", runs[0].Fields["unique_id"], err)
	}
	id := tcp.NewUniqueID(ap)
	d.printf("the agreed ncclUniqueId (from neuronGetUniqueId, broadcast over ncclBootstrapSend/Recv) starts with the root's sockaddr_in (%d of %d bytes): %s",
		abi.NcclSocketAddressSize, abi.NcclUniqueIDBytes, hex.EncodeToString(id[:abi.NcclSocketAddressSize]))

	hosts[2] = worldprog.WorldHost(host, true)
	runs, err = run("the same, rank 2 posting the reordered program", hosts)
	if err != nil {
		return err
	}
	for r, run := range runs {
		d.printf("  rank %d: exit %d: %s", r, run.Exit, run.Fields["error"])
		if want := cfmt.Sprintf(abi.MsgSigValidationFailed, uint32(r)); run.Exit == 0 || run.Fields["error"] != want {
			return fmt.Errorf("rank %d: exit %d %q, want a failure with %q", r, run.Exit, run.Fields["error"], want)
		}
	}

	mixed := []worldprog.Member{worldprog.GoRank(self, false), worldprog.WorldHost(host, false), worldprog.GoRank(self, false), worldprog.WorldHost(host, false)}
	runs, err = run("a mixed world: ranks 0 and 2 the Go `nrtabi-runtime bootstrap`, ranks 1 and 3 C hosts with the reference libnccom", mixed)
	if err != nil {
		return err
	}
	for _, r := range runs {
		d.printf("  %s", shortLine(r.Fields))
	}
	if ok, bad := worldprog.Agreed(runs); !ok {
		return fmt.Errorf("the mixed world did not agree: rank %d: %s\n%s", bad, runs[bad].Fields["line"], runs[bad].Stderr)
	}
	return nil
}

// shortLine is a rank's report without its timestamps.
func shortLine(f map[string]string) string {
	return fmt.Sprintf("rank=%s nranks=%s prev=%s next=%s cluster_id=%s unique_id=%s verdict=%s",
		f["rank"], f["nranks"], f["prev"], f["next"], f["cluster_id"], f["unique_id"], f["verdict"])
}
