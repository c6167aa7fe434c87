package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/netns"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// TestBootstrapAcrossThreeHosts runs one rank per namespace: each picks its
// own interface on the root's subnet, and the three agree on the world.
func TestBootstrapAcrossThreeHosts(t *testing.T) {
	hosts, addrs := netns.Hosts(t, 3)
	bin := nrtabiBinary(t)
	rootID := addrs[0] + ":29555"
	res := make([]procResult, len(hosts))
	var wg sync.WaitGroup
	for r, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[r] = runInNetns(h, rootID, bin, []string{"bootstrap", "--rank", strconv.Itoa(r), "--nranks", strconv.Itoa(len(hosts))})
		}()
	}
	wg.Wait()
	first := worldprog.ParseLine(res[0].stdout)
	for r, p := range res {
		f := worldprog.ParseLine(p.stdout)
		if p.exit != 0 || f["verdict"] != "ok" {
			t.Fatalf("host %s rank %d: exit %d %q\n%s", hosts[r], r, p.exit, p.stdout, p.stderr)
		}
		if f["cluster_id"] != first["cluster_id"] || f["unique_id"] != first["unique_id"] {
			t.Errorf("rank %d disagrees: %s vs %s", r, f["line"], first["line"])
		}
		// Each host listens on its own address, chosen for the root's subnet.
		if want := fmt.Sprintf("Bootstrap : Using eth0:%s<0>", addrs[r]); !strings.Contains(p.stderr, want) {
			t.Errorf("rank %d did not log %q:\n%s", r, want, p.stderr)
		}
	}
	// The replica group's comm is split from the world by default
	// (docs/bootstrap.md#group-comm-split): no root, rank 0's second split id.
	if id := first["unique_id"]; !strings.HasPrefix(id, "split(cluster="+first["cluster_id"]+",") || !strings.HasSuffix(id, ",n=3,root=0,serial=2)") {
		t.Errorf("the agreed unique id %s is not rank 0's split of this world (cluster %s)", id, first["cluster_id"])
	}
	t.Logf("3 hosts %v agree: cluster_id %s, unique id %s", addrs, first["cluster_id"], first["unique_id"])
}

// TestBootstrapHierAcrossFourHosts is a hierarchical world across four
// hosts, three ranks each (an instance per host, L = 3): the intra rings
// stay on a host, the leaders' ring crosses them; every rank agrees and
// gathers the same table, in both framings.
func TestBootstrapHierAcrossFourHosts(t *testing.T) {
	const nhosts, l = 4, 3
	const n = nhosts * l
	hosts, addrs := netns.Hosts(t, nhosts)
	bin := nrtabiBinary(t)
	for i, ext := range []bool{false, true} {
		t.Run(fmt.Sprintf("extended=%v", ext), func(t *testing.T) {
			rootID := fmt.Sprintf("%s:%d", addrs[0], 29556+i)
			res := make([]procResult, n)
			var wg sync.WaitGroup
			for r := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					args := []string{"bootstrap", "--rank", strconv.Itoa(r), "--nranks", strconv.Itoa(n), "--per-instance", strconv.Itoa(l)}
					var env []string
					if ext {
						env = append(env, tcp.EnvFraming+"=extended")
					}
					res[r] = runInNetns(hosts[r/l], rootID, bin, args, env...)
				}()
			}
			wg.Wait()
			first := worldprog.ParseLine(res[0].stdout)
			for r, p := range res {
				f := worldprog.ParseLine(p.stdout)
				if p.exit != 0 || f["verdict"] != "ok" {
					t.Fatalf("host %s rank %d: exit %d %q\n%s", hosts[r/l], r, p.exit, p.stdout, p.stderr)
				}
				prev, next := worldprog.RingNeighbours(r, n, l)
				if f["cluster_id"] != first["cluster_id"] || f["unique_id"] != first["unique_id"] || f["table"] == "" || f["table"] != first["table"] ||
					f["prev"] != strconv.Itoa(prev) || f["next"] != strconv.Itoa(next) || f["per_instance"] != strconv.Itoa(l) {
					t.Errorf("rank %d disagrees: %s vs %s", r, f["line"], first["line"])
				}
				if want := fmt.Sprintf("Bootstrap : Using eth0:%s<0>", addrs[r/l]); !strings.Contains(p.stderr, want) {
					t.Errorf("rank %d did not log %q:\n%s", r, want, p.stderr)
				}
			}
			t.Logf("%d ranks on 4 hosts %v agree: table %s", n, addrs, first["table"])
		})
	}
}

// runInNetns runs one rank of nrtabi-runtime in network namespace host,
// told the root's address and the test's socket timeout.
func runInNetns(host, rootID, bin string, args []string, env ...string) procResult {
	cmd := exec.Command("ip", append([]string{"netns", "exec", host, bin}, args...)...)
	cmd.Env = append(append(os.Environ(), abi.EnvRootCommID+"="+rootID, abi.EnvSockTimeout+"="+strconv.Itoa(testTimeout)), env...)
	var out, errw strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errw
	err := cmd.Run()
	res := procResult{stdout: out.String(), stderr: errw.String()}
	if err != nil {
		res.exit = cmd.ProcessState.ExitCode()
	}
	return res
}
