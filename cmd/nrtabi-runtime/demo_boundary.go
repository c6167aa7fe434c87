package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/nrtabi/nrtabi/runtime/builder"
	"github.com/nrtabi/nrtabi/spec"
)

// The runtime boundary: both legs real, through the dynamic linker.
func init() {
	addDemoStep(demoStep{order: 60, title: "build the reference pair: the Go libnrt.so.1 and libnccom doubles", run: demoBoundaryBuild})
	addDemoStep(demoStep{order: 61, title: "handshake through the dynamic linker: host -> libnrt.so.1 -> dlopen libnccom.so -> back @NRT_2.0.0", run: demoBoundaryHandshake})
	addDemoStep(demoStep{order: 62, title: "a fault: a libnccom reporting the wrong compatibility id", run: demoBoundaryFault})
}

type boundaryDemo struct {
	tree               *builder.Tree
	lib, stubs, host   string
	good, incompatible string
}

func demoBoundaryBuild(d *demoEnv) error {
	t, err := builder.Open(d.release)
	if err != nil {
		return err
	}
	b := &boundaryDemo{tree: t, lib: filepath.Join(d.work, "lib"), stubs: filepath.Join(d.work, "stubs"), host: filepath.Join(d.work, "host")}
	p, err := t.BuildLibnrt(b.lib, builder.Versioned)
	if err != nil {
		return err
	}
	desc, err := describeLibnrt(p)
	if err != nil {
		return err
	}
	d.printf("libnrt.so.1 (go build -buildmode=c-shared): %s", desc)
	for _, name := range []string{builder.StubGood, t.StubIncompatible()} {
		st, err := t.StubByName(name)
		if err != nil {
			return err
		}
		sp, err := t.BuildStub(b.lib, b.stubs, st)
		if err != nil {
			return err
		}
		f, err := elf.Open(sp)
		if err != nil {
			return err
		}
		needed, _ := f.ImportedLibraries()
		syms, _ := f.DynamicSymbols()
		f.Close()
		bound := 0
		for _, s := range syms {
			if s.Section == elf.SHN_UNDEF && s.Library == builder.LibnrtFile && s.Version == t.Spec.Reverse[0].Version {
				bound++
			}
		}
		d.printf("libnccom double %-9s (gcc, generated nccom_stub.c): DT_NEEDED %s; %d imports @%s", name, strings.Join(needed, " "), bound, t.Spec.Reverse[0].Version)
		if name == builder.StubGood {
			b.good = sp
		} else {
			b.incompatible = sp
		}
	}
	if err := t.BuildHost(b.host, b.lib); err != nil {
		return err
	}
	d.printf("host program (gcc) linked against libnrt.so.1")
	d.state["boundary"] = b
	return nil
}

// runHost runs the host under the real dynamic linker and returns its
// output with the log timestamps removed.
func (b *boundaryDemo) runHost(extraEnv []string, args ...string) ([]string, error) {
	cmd := exec.Command(b.host, args...)
	cmd.Env = append(os.Environ(), append([]string{"LD_LIBRARY_PATH=" + b.lib}, extraEnv...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("host %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
		if i := strings.Index(l, "time="); i == 0 {
			if j := strings.IndexByte(l, ' '); j > 0 {
				l = l[j+1:]
			}
		}
		lines = append(lines, l)
	}
	return lines, nil
}

func pick(lines []string, keep func(string) bool) []string {
	var out []string
	for _, l := range lines {
		if keep(l) {
			out = append(out, l)
		}
	}
	return out
}

func demoBoundaryHandshake(d *demoEnv) error {
	b := d.state["boundary"].(*boundaryDemo)
	// The default library name through the normal search path.
	lines, err := b.runHost([]string{"LD_LIBRARY_PATH=" + b.lib + ":" + filepath.Dir(b.good), "NRTABI_LOG_LEVEL=debug"}, "run", "-", "-")
	if err != nil {
		return err
	}
	d.printf("libnccom.so found by its default name on LD_LIBRARY_PATH=%s", filepath.Dir(b.good))
	probe := fmt.Sprintf("#%-2d ", 0)
	trip := fmt.Sprintf("#%-2d ", b.tree.Spec.ForwardByName("neuronGetPeerDeviceId").Index)
	var okCalls int
	for _, l := range lines {
		if strings.HasPrefix(l, "  #") && strings.Contains(l, "rc=0 ") {
			okCalls++
		}
	}
	shown := pick(lines, func(l string) bool {
		return strings.Contains(l, "Using CCOM") || strings.HasPrefix(l, "nrtabi_init") || strings.HasPrefix(l, "after init") ||
			strings.Contains(l, probe) || strings.Contains(l, trip)
	})
	// The reverse leg of the round trip: the debug trace lines just before
	// the forward call's own line.
	var trace []string
	for i, l := range lines {
		if strings.Contains(l, trip) {
			for j := i - 1; j >= 0 && strings.Contains(lines[j], "msg=reverse"); j-- {
				trace = append([]string{lines[j]}, trace...)
			}
			break
		}
	}
	for _, l := range shown {
		if strings.Contains(l, trip) {
			for _, tl := range trace {
				d.printf("  %s", tl)
			}
		}
		d.printf("%s", strings.TrimSpace(l))
	}
	d.printf("%d/%d forward entry points answered through the typed Go API", okCalls, len(b.tree.Spec.Forward))
	if okCalls != len(b.tree.Spec.Forward) {
		return fmt.Errorf("only %d of %d forward calls succeeded", okCalls, len(b.tree.Spec.Forward))
	}
	return nil
}

func demoBoundaryFault(d *demoEnv) error {
	b := d.state["boundary"].(*boundaryDemo)
	lines, err := b.runHost(nil, "run", "-", b.incompatible)
	if err != nil {
		return err
	}
	failed, logged, hot := 0, 0, ""
	var firstLog string
	hotName := ""
	for _, f := range b.tree.Spec.Forward {
		if f.Guard == spec.Hot {
			hotName = f.Name
		}
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "  #") && strings.Contains(l, ": NRT_FAILURE") {
			failed++
		}
		if strings.HasPrefix(l, "  #") && strings.Contains(l, hotName+": ") {
			hot = l[strings.Index(l, hotName+": ")+len(hotName)+2:]
		}
		if strings.Contains(l, "NCCL init error: ") {
			logged++
			if firstLog == "" {
				firstLog = l
			}
		}
	}
	for _, l := range pick(lines, func(l string) bool {
		return strings.HasPrefix(l, "nrtabi_init") || strings.HasPrefix(l, "after init")
	}) {
		d.printf("%s", l)
	}
	d.printf("%d forward calls (every guarded one and the probe) returned NRT_FAILURE; the hot path was not entered (%s)", failed, hot)
	d.printf("%d log lines, one per guarded call in two passes (the sentinel stays armed), like:", logged)
	d.printf("  %s", firstLog)
	if failed == 0 || logged == 0 {
		return fmt.Errorf("the fault did not show: %d failures, %d log lines", failed, logged)
	}
	return nil
}
