package net

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/bench/benchenv"
	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/netns"
	"github.com/nrtabi/nrtabi/internal/proc"
	"github.com/nrtabi/nrtabi/internal/vendorbuild"
	"github.com/nrtabi/nrtabi/runtime/builder"
)

// reps is how many times each path runs each size (interleaved); the
// medians are reported. NETBENCH_REPS overrides it.
var reps = 5

type stack struct {
	libnrt, libnccom, host string
	plugin, pluginName     string
	pluginEnv              []string
}

func build(b *testing.B) *stack {
	ctx := b.Context()
	tree, err := builder.Open(abi.Release)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	s := &stack{libnrt: filepath.Join(dir, "lib"), libnccom: filepath.Join(dir, "nccom"), host: filepath.Join(dir, "netbench")}
	if _, err := tree.BuildLibnrt(ctx, s.libnrt, builder.Versioned); err != nil {
		b.Fatal(err)
	}
	if _, err := tree.BuildLibnccom(ctx, s.libnrt, s.libnccom, builder.Libnccom{}); err != nil {
		b.Fatal(err)
	}
	src := filepath.Join(tree.Root, "bench", "net", "csrc", "netbench.c")
	if err := tree.BuildProgram(ctx, s.host, []string{src}, "-L"+s.libnrt, "-l:"+builder.LibnrtFile, "-ldl"); err != nil {
		b.Fatal(err)
	}
	vb, err := vendorbuild.Get(ctx, vendorbuild.Options{Root: tree.Root})
	var absent *vendorbuild.Absent
	switch {
	case errors.As(err, &absent):
		fmt.Printf("# %v: the plugin is the double instead\n", err)
		good, _ := builder.NetDoubleByName(builder.NetDoubleGood)
		p, err := tree.BuildNetDouble(ctx, filepath.Join(dir, "double"), good, false)
		if err != nil {
			b.Fatal(err)
		}
		s.plugin, s.pluginName = p, "the plugin double"
	case err != nil:
		b.Fatal(err)
	default:
		s.plugin, s.pluginName, s.pluginEnv = vb.Plugin, "aws-ofi-nccl 1.21.1 over libfabric 2.6.0 tcp", vb.Env()
	}
	return s
}

var result = regexp.MustCompile(`size=(\d+) bytes=(\d+) secs=([0-9.]+)`)

// pair runs one path between the two hosts and returns MiB/s per size.
func (s *stack) pair(b *testing.B, hosts, addrs []string, mode string) map[int]float64 {
	ctx, cancel := context.WithTimeout(b.Context(), 5*time.Minute)
	defer cancel()
	env := append(os.Environ(), "LD_LIBRARY_PATH="+s.libnrt+":"+s.libnccom, "NRTABI_NET_PLUGIN="+s.plugin, "NRTABI_LOG_LEVEL=warn")
	env = append(env, s.pluginEnv...)
	var wg sync.WaitGroup
	outs := make([]string, 2)
	errs := make([]error, 2)
	for r := 0; r < 2; r++ {
		arg := addrs[1] // the peer the direct and tcp paths meet at: rank 1 listens
		if mode == "stack" {
			arg = addrs[0] + ":29601"
		}
		cmd := proc.Command(ctx, "ip", "netns", "exec", hosts[r], s.host, mode, strconv.Itoa(r), arg)
		cmd.Env = append(env, "NRTABI_NETPLUGIN_ADDR="+addrs[r])
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := cmd.CombinedOutput()
			outs[r], errs[r] = string(out), proc.Err(ctx, err)
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			b.Fatalf("%s rank %d: %v\n%s", mode, r, err, outs[r])
		}
	}
	mibs := map[int]float64{}
	for _, m := range result.FindAllStringSubmatch(outs[1], -1) {
		size, _ := strconv.Atoi(m[1])
		bytes, _ := strconv.ParseFloat(m[2], 64)
		secs, _ := strconv.ParseFloat(m[3], 64)
		mibs[size] = bytes / secs / (1 << 20)
	}
	return mibs
}

var callsLine = regexp.MustCompile(`trampoline_ns=([0-9.]+) direct_ns=([0-9.]+)`)

// BenchmarkNet prints the table of docs/benchmarks.md#net-plugin. It runs
// once whatever b.N is: each row is already a median of reps runs.
func BenchmarkNet(b *testing.B) {
	if _, err := exec.LookPath("ip"); err != nil {
		b.Skip("skipped: no ip command (iproute2)")
	}
	if v, err := strconv.Atoi(os.Getenv("NETBENCH_REPS")); err == nil && v > 0 && v <= 100 {
		reps = v
	}
	s := build(b)
	hosts, addrs := netns.Hosts(b, 2)
	fmt.Printf("# net benchmark, %s; nproc %s, load %s (before)\n", time.Now().UTC().Format("2006-01-02 15:04 MST"), benchenv.NProc(), benchenv.LoadAvg())
	fmt.Printf("# plugin: %s; two network namespaces on a veth bridge; %d runs per path, interleaved, medians\n", s.pluginName, reps)
	modes := []string{"stack", "direct", "tcp"}
	got := map[string]map[int][]float64{}
	for _, m := range modes {
		got[m] = map[int][]float64{}
	}
	for i := 0; i < reps; i++ {
		for _, m := range modes {
			for size, v := range s.pair(b, hosts, addrs, m) {
				got[m][size] = append(got[m][size], v)
			}
		}
	}
	var sizes []int
	for size := range got["direct"] {
		sizes = append(sizes, size)
	}
	slices.Sort(sizes)
	fmt.Printf("%-8s %12s %12s %12s %14s %12s\n", "size", "stack MiB/s", "direct MiB/s", "tcp MiB/s", "stack/direct", "tcp/direct")
	for _, size := range sizes {
		st, di, tc := benchenv.Median(got["stack"][size]), benchenv.Median(got["direct"][size]), benchenv.Median(got["tcp"][size])
		goal := ""
		if size >= 1<<20 {
			goal = "  (goal >= 0.95: " + metOrMissed(st/di >= 0.95) + ")"
		}
		fmt.Printf("%-8s %12.1f %12.1f %12.1f %14.3f %12.3f%s\n", human(size), st, di, tc, st/di, tc/di, goal)
	}

	ctx, cancel := context.WithTimeout(b.Context(), 2*time.Minute)
	defer cancel()
	cmd := proc.Command(ctx, "ip", "netns", "exec", hosts[0], s.host, "calls", addrs[0]+":29602", "20000000")
	cmd.Env = append(append(os.Environ(), "LD_LIBRARY_PATH="+s.libnrt+":"+s.libnccom, "NRTABI_NET_PLUGIN="+s.plugin,
		"NRTABI_LOG_LEVEL=warn", "NRTABI_NETPLUGIN_ADDR="+addrs[0]), s.pluginEnv...)
	out, err := cmd.CombinedOutput()
	if err = proc.Err(ctx, err); err != nil {
		b.Fatalf("calls: %v\n%s", err, out)
	}
	m := callsLine.FindStringSubmatch(string(out))
	if m == nil {
		b.Fatalf("calls printed no result:\n%s", out)
	}
	tr, _ := strconv.ParseFloat(m[1], 64)
	di, _ := strconv.ParseFloat(m[2], 64)
	fmt.Printf("per call (neuronGetOFIHandle, fastest of 200 blocks of 1e5 calls): trampoline %.2f ns, direct %.2f ns, ratio %.3f (goal <= 1.15: %s)\n", tr, di, tr/di, metOrMissed(tr/di <= 1.15))
	fmt.Printf("# load %s (after)\n", benchenv.LoadAvg())
	for b.Loop() {
	}
}

func metOrMissed(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}

func human(n int) string {
	if n >= 1<<20 {
		return strconv.Itoa(n>>20) + " MiB"
	}
	return strconv.Itoa(n>>10) + " KiB"
}
