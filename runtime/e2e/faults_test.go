package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cfmt"
	"github.com/nrtabi/nrtabi/runtime/builder"
	"github.com/nrtabi/nrtabi/spec"
)

// hostRun runs the host's "run" mode against one libnccom and returns
// everything it printed (stdout and the runtime's log, interleaved).
func hostRun(t *testing.T, libnccom string, extraEnv ...string) string {
	t.Helper()
	cmd := exec.Command(hostPath(), "run", "-", libnccom)
	cmd.Env = append(append(os.Environ(), env...), append([]string{"LD_LIBRARY_PATH=" + libnrtDir()}, extraEnv...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("host run %s: %v\n%s", libnccom, err, out.String())
	}
	return out.String()
}

// fault is one bad double (or a missing library) and the sentinel message
// the spec says it produces.
type fault struct {
	name, lib string
	prefix    string // the sentinel message starts with this
	contains  string // and contains this (the loader's reason)
	exact     bool   // or is exactly prefix
}

func faults() []fault {
	s := tree.Spec
	msg := func(id string) string { return s.MessageByID(id).Text }
	fs := []fault{
		{name: "missing library", lib: filepath.Join(buildRoot, "nowhere", builder.StubFile),
			prefix: cfmt.Sprintf(msg("nccl_dlopen_failed"), ""), contains: "cannot open shared object file"},
		{name: "no probe", lib: stubPath(builder.StubNoProbe), prefix: msg("nccl_no_probe"), exact: true},
		{name: "incompatible", lib: stubPath(tree.StubIncompatible()),
			prefix: cfmt.Sprintf(msg("nccl_incompatible"), tree.WrongCompat()), exact: true},
	}
	for _, i := range tree.MissingIndices() {
		name := s.ByIndex()[i].Name
		fs = append(fs, fault{name: builder.StubMissing(i), lib: stubPath(builder.StubMissing(i)),
			prefix: cfmt.Sprintf(msg("nccl_missing_symbol"), name, ""), contains: "undefined symbol: " + name})
	}
	return fs
}

// TestFaultMatrix holds every bad double, and a missing library, to the
// contract computed from the spec (not from recorded output): the load
// fails, all slots stay NULL, the sentinel holds the exact message, every
// guarded call returns NRT_FAILURE and logs "NCCL init error: <message>"
// (twice, since the sentinel stays armed), the probe still returns
// NRT_FAILURE, the hot path is never entered, and nothing crashes.
func TestFaultMatrix(t *testing.T) {
	requireBuild(t)
	for _, f := range faults() {
		t.Run(f.name, func(t *testing.T) {
			for _, p := range checkFault(hostRun(t, f.lib), f) {
				t.Error(p)
			}
		})
	}
}

// The checker must see a handoff that did not fail, a sentinel that was
// disarmed after reporting, a wrong message and a hot path that was entered.
func TestFaultCheckerCatches(t *testing.T) {
	requireBuild(t)
	f := faults()[2] // incompatible
	out := hostRun(t, f.lib)
	if p := checkFault(out, f); len(p) != 0 {
		t.Fatalf("the unplanted output fails: %v", p)
	}
	nslots := len(tree.Spec.Forward)
	hot := tree.Spec.ForwardByName("neuronNetworkProxyProgress").Index
	disarmed := strings.Repeat(" 1", hot) + " 13" + strings.Repeat(" 1", nslots-hot-1)
	for name, c := range map[string]struct {
		out, want string
	}{
		"handoff succeeded": {hostRun(t, stubPath(builder.StubGood)), "nrtabi_init status 0"},
		"sentinel disarmed": {strings.Replace(out, "again:"+disarmed, "again: 1"+strings.Repeat(" 0", nslots-1), 1), "the sentinel must stay armed"},
		"other message":     {strings.ReplaceAll(out, "expected: ", "wanted: "), "sentinel after init"},
		"hot path entered":  {strings.Replace(out, fmt.Sprintf("  #%-2d rc=13 ", hot), fmt.Sprintf("  #%-2d rc=1  ", hot), 1), "want rc 13"},
	} {
		got := strings.Join(checkFault(c.out, f), "\n")
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: the checker reported\n%s\nwant a problem containing %q", name, got, c.want)
		}
	}
}

func checkFault(out string, f fault) (p problems) {
	s := tree.Spec
	lines := strings.Split(out, "\n")
	find := func(prefix string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return strings.TrimPrefix(l, prefix)
			}
		}
		p.add("no line starting %q", prefix)
		return ""
	}
	if st := find("nrtabi_init: status "); st != "1" {
		p.add("nrtabi_init status %s, want 1 (NRT_FAILURE)", st)
	}
	armed := fmt.Sprintf("0/%d slots valid, sentinel armed: ", len(s.Forward))
	after := find("after init: ")
	sentinel := strings.TrimPrefix(after, armed)
	if !strings.HasPrefix(after, armed) || !strings.HasPrefix(sentinel, f.prefix) || f.exact && sentinel != f.prefix || !strings.Contains(sentinel, f.contains) {
		p.add("sentinel after init: %q, want %q followed by %q (exact %v, containing %q)", after, armed, f.prefix, f.exact, f.contains)
	}
	if got := find("after the calls: "); got != after {
		p.add("after the calls: %q, want the same as after init, %q", got, after)
	}
	initErr := "msg=" + strconv.Quote(cfmt.Sprintf(s.MessageByID("nccl_init_error").Text, sentinel))
	var again []string
	for _, fw := range s.ByIndex() {
		line := find(fmt.Sprintf("  #%-2d rc=", fw.Index))
		want := map[string]string{spec.Probe: "1", spec.Hot: "13", spec.Guarded: "1"}[fw.Guard]
		if !strings.HasPrefix(line, want+" ") {
			p.add("#%d %s (%s): %q, want rc %s", fw.Index, fw.Name, fw.Guard, line, want)
		}
		logs := strings.Count(out, initErr+" subsys=ENC fn="+fw.Trampoline+"\n")
		wantLogs := 0
		if fw.Guard == spec.Guarded {
			wantLogs = 2
		}
		if logs != wantLogs {
			p.add("%s logged %s %d times, want %d", fw.Trampoline, initErr, logs, wantLogs)
		}
		again = append(again, want)
	}
	if got := find("again: "); got != strings.Join(again, " ") {
		p.add("second pass %q, want %q: the sentinel must stay armed", got, strings.Join(again, " "))
	}
	return p
}
