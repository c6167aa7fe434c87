package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/internal/proc"
	"github.com/nrtabi/nrtabi/runtime/builder"
)

var (
	proxyRefOnce sync.Once
	proxyRefErr  error
)

var proxyLine = regexp.MustCompile(`nrtabi_proxy_run: status (\d+): thread=proxy-(\d+) ticks=(\d+) progressed=(\d+) status=(\S+)`)

// The proxy-<tid> loop (docs/sources.md#s000-3, runtime/nrt's ProxyDriver)
// through the real dynamic linker and the real libraries: a C host loads
// libnrt.so.1, which dlopens the libnccom named and runs the loop there.
// The reference libnccom's proxy needs a net plugin neuronInitNet loaded
// (docs/net-seam.md#proxy); without one its first tick ends the loop with
// its NRT_FAILURE and its one warning; over the good
// double, whose tick progresses, the loop runs until its time is up.
func TestProxyDriverThroughLibnccom(t *testing.T) {
	requireBuild(t)
	ref := refLibDir("proxy")
	proxyRefOnce.Do(func() {
		_, proxyRefErr = tree.BuildLibnccom(context.Background(), libnrtDir(), ref, builder.Libnccom{})
	})
	if proxyRefErr != nil {
		t.Fatalf("building the reference libnccom: %v", proxyRefErr)
	}
	run := func(lib, ms string) (m []string, stderr string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := proc.Command(ctx, hostPath(), "proxy", "-", lib, ms)
		cmd.Env = append(append(os.Environ(), env...), "LD_LIBRARY_PATH="+libnrtDir()+":"+filepath.Dir(lib))
		var errb strings.Builder
		cmd.Stderr = &errb
		out, err := cmd.Output()
		if err = proc.Err(ctx, err); err != nil {
			t.Fatalf("host proxy %s: %v\n%s%s", lib, err, out, errb.String())
		}
		if m = proxyLine.FindStringSubmatch(string(out)); m == nil {
			t.Fatalf("host proxy %s printed no proxy line:\n%s%s", lib, out, errb.String())
		}
		return m, errb.String()
	}

	m, stderr := run(filepath.Join(ref, builder.LibnccomFile), "5000")
	if m[1] != "1" || m[3] != "1" || m[4] != "0" || m[5] != "NRT_FAILURE" {
		t.Errorf("over the reference libnccom: %q; want status 1 after 1 tick, no progress, NRT_FAILURE", m[0])
	}
	if n := strings.Count(stderr, "neuronNetworkProxyProgress: no net plugin is loaded"); n != 1 {
		t.Errorf("%d warnings from the reference libnccom's tick, want 1:\n%s", n, stderr)
	}
	if !strings.Contains(stderr, "thread=proxy-"+m[2]) {
		t.Errorf("no log line names proxy-%s:\n%s", m[2], stderr)
	}

	m, _ = run(stubPath("good"), "200")
	ticks, _ := strconv.Atoi(m[3])
	if m[1] != "0" || m[5] != "NRT_SUCCESS" || ticks < 2 || m[4] != m[3] {
		t.Errorf("over the good double: %q; want NRT_SUCCESS after many ticks, every one progressing", m[0])
	}
}
