package tcp

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
)

// The child side of TestProcessKilledMidGather: this test binary re-run as
// one rank, which SIGKILLs itself at step 0 of its second all-gather.
const (
	envChildRank  = "NRTABI_TCP_TEST_CHILD_RANK"
	envChildN     = "NRTABI_TCP_TEST_CHILD_NRANKS"
	envChildPhase = "NRTABI_TCP_TEST_CHILD_PHASE"
)

func TestMain(m *testing.M) {
	if os.Getenv(envChildRank) != "" {
		os.Exit(childRank())
	}
	os.Exit(m.Run())
}

// childRank runs one rank from the environment (ConfigFromEnv,
// NRTABI_BOOTSTRAP_ROOTS) and kills itself as told; it exits 3 if it lives.
func childRank() int {
	rank, _ := strconv.Atoi(os.Getenv(envChildRank))
	n, _ := strconv.Atoi(os.Getenv(envChildN))
	phase, _ := strconv.Atoi(os.Getenv(envChildPhase))
	cfg, err := ConfigFromEnv(os.Getenv)
	if err != nil {
		fmt.Println("child:", err)
		return 2
	}
	roots, err := ParseRoots(abi.EnvBootstrapRoots, os.Getenv(abi.EnvBootstrapRoots))
	if err != nil {
		fmt.Println("child:", err)
		return 2
	}
	cfg.IfName, cfg.Logger = "lo", quietLog
	seen := 0
	cfg.Hooks = &Hooks{RingStep: func(p uint32, step int, me netip.AddrPort) bool {
		if int(p) == phase && step == 0 {
			if seen++; seen == 2 {
				fmt.Printf("dying listen=%s\n", me)
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			}
		}
		return false
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err = NewNet(cfg).InitCommScalable(ctx, roots, rank, n, true)
	fmt.Println("child lived:", err)
	return 3
}

// A real process killed mid-gather (SIGKILL: the kernel closes its
// sockets): the other ranks, in this process, each fail within 2 s under
// the default 30 s socket timeout, naming the dead rank, its listen
// address and a phase. Flat (both framings), hierarchical, multi-root.
// Cost: one child process per case, about 0.5 s each.
func TestProcessKilledMidGather(t *testing.T) {
	for _, c := range []struct {
		name    string
		n, r, l int
		ext     bool
		bidir   bool
		dead    int
		phase   uint32
	}{
		{"flat", 8, 1, 0, false, false, 3, abi.BootstrapPhaseFlatRing},
		{"flat extended", 8, 1, 0, true, false, 3, abi.BootstrapPhaseFlatRing},
		{"hier", 12, 1, 4, false, true, 5, abi.BootstrapPhaseIntraRing},
		{"multi-root", 12, 3, 0, false, true, 6, abi.BootstrapPhaseFlatRing},
	} {
		t.Run(c.name, func(t *testing.T) {
			lns := make([]*net.TCPListener, c.r)
			addrs := make([]netip.AddrPort, c.r)
			list := make([]string, c.r)
			for i := range lns {
				ln, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(loopAny))
				if err != nil {
					t.Fatal(err)
				}
				lns[i], addrs[i] = ln, ln.Addr().(*net.TCPAddr).AddrPort()
				list[i] = addrs[i].String()
			}
			conf := func() Config {
				return Config{Timeout: DefaultTimeout, IfName: "lo", Logger: quietLog, PerInstance: c.l, Extended: c.ext, Bidirectional: c.bidir}
			}
			for i := range lns {
				root, err := NewNet(conf()).CreateRootRange(t.Context(), lns[i], addrs, i, c.n, true)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { root.Close() })
			}
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(),
				envChildRank+"="+strconv.Itoa(c.dead), envChildN+"="+strconv.Itoa(c.n), envChildPhase+"="+strconv.Itoa(int(c.phase)),
				abi.EnvBootstrapRoots+"="+strings.Join(list, ","), envSockTimeoutDefault(), EnvFraming+"="+map[bool]string{false: "upstream", true: "extended"}[c.ext],
				abi.EnvBootstrapRing+"="+map[bool]string{false: "unidirectional", true: "bidirectional"}[c.bidir],
				abi.EnvBootstrapPerInstance+"="+map[bool]string{false: "", true: strconv.Itoa(c.l)}[c.l > 0])
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			d := &dieAt{dead: c.dead, phase: c.phase, fired: true}
			lines := make(chan string, 1)
			go func() {
				sc := bufio.NewScanner(out)
				sc.Buffer(make([]byte, 4096), 4096) // a bounded line
				for sc.Scan() {
					if strings.HasPrefix(sc.Text(), "dying listen=") {
						d.mu.Lock()
						d.when = time.Now()
						d.addr, _ = netip.ParseAddrPort(strings.TrimPrefix(sc.Text(), "dying listen="))
						d.mu.Unlock()
					}
					select {
					case lines <- sc.Text():
					default:
					}
				}
			}()
			errs, ended := make([]error, c.n), make([]time.Time, c.n)
			var wg sync.WaitGroup
			for rank := range c.n {
				if rank == c.dead {
					continue
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					e, err := NewNet(conf()).InitCommScalable(ctx, addrs, rank, c.n, true)
					errs[rank], ended[rank] = err, time.Now()
					e.Close()
				}()
			}
			wg.Wait()
			werr := cmd.Wait()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				last := ""
				select {
				case last = <-lines:
				default:
				}
				t.Fatalf("the child rank was not killed mid-gather (%v): %s", werr, cfmt.Escape(last, 1024))
			}
			d.mu.Lock()
			defer d.mu.Unlock()
			checkDeath(t, d, errs, ended)
		})
	}
}

// envSockTimeoutDefault leaves NEURON_CCOM_SOCK_TIMEOUT at its default in
// the child, whatever the test's environment says.
func envSockTimeoutDefault() string {
	return abi.EnvSockTimeout + "=" + strconv.Itoa(int(DefaultTimeout/time.Second))
}
