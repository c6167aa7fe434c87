package main

// `make demo`: the main job on an embedded release, one step after another.
// Each step prints a few lines and hands what later steps need on through
// the typed fields of demo; the first failing step stops the demo with a
// non-zero exit.

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/cfmt"
	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/internal/proc"
	"github.com/nrtabi/nrtabi/layoutcheck"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/runtime/builder"
	"github.com/nrtabi/nrtabi/runtime/collectives"
	"github.com/nrtabi/nrtabi/runtime/device"
	"github.com/nrtabi/nrtabi/runtime/transport/inproc"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// demo is what the steps share: where they work, where they print, and
// what each leaves for the ones after it.
type demo struct {
	release string
	work    string
	out     io.Writer

	spec *spec.Spec // validate
	gen  string     // generate: the generated tree

	tree               *builder.Tree // buildPair
	lib, stubs, host   string        // buildPair: libnrt.so.1's directory, the doubles', the host program
	good, incompatible string        // buildPair: the two libnccom doubles

	types, libnrt string // show: the gcc -g objects layoutcheck reads
}

func (d *demo) printf(format string, args ...any) { fmt.Fprintf(d.out, "    "+format+"\n", args...) }

func demoCmd(ctx context.Context, c *cli.Command, args []string, out, errw io.Writer) error {
	fs := c.Flags(out, errw)
	var sf cli.SpecFlag
	sf.Register(fs, "spec", spec.Default, "the release to demonstrate (this binary must be built for it: -tags "+gen.ReleaseTag("NAME")+")")
	keep := fs.Bool("keep", false, "keep the scratch directory")
	if err := c.Parse(fs, args); err != nil {
		return err
	}
	release, err := embeddedRelease(c, &sf)
	if err != nil {
		return err
	}
	if err := demoRelease(release); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "nrtabi-demo-")
	if err != nil {
		return err
	}
	if *keep {
		fmt.Fprintf(out, "scratch directory: %s\n", work)
	} else {
		defer os.RemoveAll(work)
	}
	d := &demo{release: release, work: work, out: out}
	steps := []struct {
		title string
		run   func(context.Context) error
	}{
		{"validate the embedded spec", d.validate},
		{"regenerate the bindings into a scratch directory", d.generate},
		{"compile the generated C (gcc -std=c11 -Wall -Wextra -Werror)", d.compileC},
		{"compile and test the generated Go", d.compileGo},
		{"layouts the build now holds in place", d.structs},
		{"build the reference pair: the Go libnrt.so.1 and libnccom doubles", d.buildPair},
		{"handshake through the dynamic linker: host -> libnrt.so.1 -> dlopen libnccom.so -> back @NRT_2.0.0", d.handshake},
		{"a fault: a libnccom reporting the wrong compatibility id", d.fault},
		{"layoutcheck: nrtabi show nec_version_info_t on a gcc -g object", d.show},
		{"layoutcheck: extract -> check round trip, and a libnrt's link contract", d.roundTrip},
		{"collectives: 8-rank bootstrap of one replica group, then one rank reordered", d.collectives},
		{"bootstrap over TCP through the boundary: 4 C hosts (libnrt + the reference libnccom) agree, a reordered program fails all 4, a mixed Go/C world agrees", d.bootstrap},
	}
	start := time.Now()
	for i, s := range steps {
		fmt.Fprintf(out, "[%d/%d] %s\n", i+1, len(steps), s.title)
		t := time.Now()
		if err := s.run(ctx); err != nil {
			return c.Errorf("%s: %v", s.title, err)
		}
		fmt.Fprintf(out, "    (%s)\n", time.Since(t).Round(time.Millisecond))
	}
	fmt.Fprintf(out, "demo OK in %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// demoRelease refuses a demo that would not run wholly on release: one the
// checkout has not generated (the command that generates it), or one this
// binary was not compiled for. The in-process steps (collectives, the Go
// ranks of the mixed world) run on the release compiled in through
// generated/abi, the C side on the release's generated tree; a demo across
// two releases would half-run on one layout and still print "demo OK".
// Refusing, not re-executing a rebuilt binary, keeps one
// process per demo and prints the command to run instead
// (docs/nrtabi-runtime-demo.md).
func demoRelease(release string) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	root, err := builder.FindRoot(wd)
	if err != nil {
		return err
	}
	if err := builder.CheckGenerated(root, release); err != nil {
		return err
	}
	if release != abi.Release {
		return fmt.Errorf("this nrtabi-runtime was built for release %s (-tags %s), not %s: run go run -tags %s ./cmd/nrtabi-runtime demo --spec %s (or make demo RELEASE=%s)",
			abi.Release, abi.BuildTag, release, gen.ReleaseTag(release), release, release)
	}
	return nil
}

// ---- the spec, the generator, the compilers ----

func (d *demo) validate(context.Context) error {
	s, err := compiled.Load(d.release)
	if err != nil {
		return err
	}
	d.spec = s
	for _, line := range strings.Split(strings.TrimRight(cli.SpecSummary(s), "\n"), "\n") {
		d.printf("%s", line)
	}
	return nil
}

func (d *demo) generate(context.Context) error {
	files, err := gen.Generate(d.spec)
	if err != nil {
		return err
	}
	dir := filepath.Join(d.work, "generated")
	if err := gen.Write(dir, files); err != nil {
		return err
	}
	d.gen = dir
	lines, cLines, goLines := 0, 0, 0
	for _, f := range files {
		n := bytes.Count(f.Data, []byte("\n"))
		lines += n
		if strings.HasSuffix(f.Path, ".go") {
			goLines += n
		} else {
			cLines += n
		}
	}
	d.printf("%d files, %d lines (%d C and linker script, %d Go) in %s", len(files), lines, cLines, goLines, dir)
	return nil
}

func (d *demo) compileC(ctx context.Context) error {
	if err := cc.Available(); err != nil {
		return err
	}
	dir := filepath.Join(d.gen, "c")
	tu := filepath.Join(dir, "header_check.c")
	src := fmt.Sprintf("#define _GNU_SOURCE\n#include \"%s\"\n#include \"%s\"\n", gen.HeaderName, gen.SlotsHeader)
	if err := os.WriteFile(tu, []byte(src), 0o644); err != nil {
		return err
	}
	for _, f := range []string{"header_check.c", gen.SlotsSource, gen.StubSource} {
		obj := strings.TrimSuffix(f, ".c") + ".o"
		if err := cc.ObjectContext(ctx, dir, f, obj, cc.Strict...); err != nil {
			return err
		}
		d.printf("%-16s -> %s", f, obj)
	}
	d.printf("%d _Static_asserts hold (every struct size and every known offset)", gen.CountAsserts(d.spec))
	return nil
}

func (d *demo) compileGo(ctx context.Context) error {
	dir := filepath.Join(d.gen, gen.GoPackage)
	mod := "module nrtabidemo\n\ngo 1.22\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{{"vet", "./..."}, {"test", "-count=1", "./..."}} {
		cmd := proc.Command(ctx, "go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), proc.Err(ctx, err), out)
		}
	}
	d.printf("go vet and go test pass; %d compile-time layout assertions hold", gen.CountGoAsserts(d.spec))
	return nil
}

func (d *demo) structs(context.Context) error {
	for _, name := range []string{"enc_glb_comm", "enc_nccl_comm_node", "nec_version_info_t", "nrt_version_t", "enc_replica_group_info", "ncclComm", "extInfo"} {
		st := d.spec.StructByName(name)
		if st == nil {
			continue
		}
		var known []string
		for _, f := range st.Fields {
			if len(known) == 4 {
				known = append(known, "...")
				break
			}
			known = append(known, fmt.Sprintf("%s@%d", f.Name, f.Offset))
		}
		d.printf("%-24s %7d B  %2d fields, %d opaque  %s", st.Name, st.Size, len(st.Fields), len(st.Opaque), strings.Join(known, " "))
	}
	return nil
}

// ---- the runtime boundary: both legs real, through the dynamic linker ----

func (d *demo) buildPair(ctx context.Context) error {
	t, err := builder.Open(d.release)
	if err != nil {
		return err
	}
	d.tree, d.lib, d.stubs, d.host = t, filepath.Join(d.work, "lib"), filepath.Join(d.work, "stubs"), filepath.Join(d.work, "host")
	p, err := t.BuildLibnrt(ctx, d.lib, builder.Versioned)
	if err != nil {
		return err
	}
	desc, err := describeLibnrt(p)
	if err != nil {
		return err
	}
	d.printf("libnrt.so.1 (go build -buildmode=c-shared): %s", desc)
	// The library says which release it was built for; the rest of the demo
	// runs on it only when that is the release asked for.
	if err := builder.CheckLibnrtRelease(p, d.release); err != nil {
		return err
	}
	d.printf("libnrt.so.1 names its release: %s = %q", gen.LibnrtReleaseSymbol, d.release)
	for _, name := range []string{builder.StubGood, t.StubIncompatible()} {
		st, err := t.StubByName(name)
		if err != nil {
			return err
		}
		sp, err := t.BuildStub(ctx, d.lib, d.stubs, st)
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
			d.good = sp
		} else {
			d.incompatible = sp
		}
	}
	if err := t.BuildHost(ctx, d.host, d.lib); err != nil {
		return err
	}
	d.printf("host program (gcc) linked against libnrt.so.1")
	return nil
}

// runHost runs the host under the real dynamic linker and returns its
// output with the log timestamps removed.
func (d *demo) runHost(ctx context.Context, extraEnv []string, args ...string) ([]string, error) {
	cmd := proc.Command(ctx, d.host, args...)
	cmd.Env = append(os.Environ(), append([]string{"LD_LIBRARY_PATH=" + d.lib}, extraEnv...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("host %s: %w\n%s", strings.Join(args, " "), proc.Err(ctx, err), out.String())
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

func (d *demo) handshake(ctx context.Context) error {
	// The default library name through the normal search path.
	lines, err := d.runHost(ctx, []string{"LD_LIBRARY_PATH=" + d.lib + ":" + filepath.Dir(d.good), "NRTABI_LOG_LEVEL=debug"}, "run", "-", "-")
	if err != nil {
		return err
	}
	d.printf("libnccom.so found by its default name on LD_LIBRARY_PATH=%s", filepath.Dir(d.good))
	probe := fmt.Sprintf("#%-2d ", 0)
	trip := fmt.Sprintf("#%-2d ", d.tree.Spec.ForwardByName("neuronGetPeerDeviceId").Index)
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
	d.printf("%d/%d forward entry points answered through the typed Go API", okCalls, len(d.tree.Spec.Forward))
	if okCalls != len(d.tree.Spec.Forward) {
		return fmt.Errorf("only %d of %d forward calls succeeded", okCalls, len(d.tree.Spec.Forward))
	}
	return nil
}

func (d *demo) fault(ctx context.Context) error {
	lines, err := d.runHost(ctx, nil, "run", "-", d.incompatible)
	if err != nil {
		return err
	}
	failed, logged, hot := 0, 0, ""
	var firstLog string
	hotName := ""
	for _, f := range d.tree.Spec.Forward {
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

// ---- layoutcheck: a struct read back from real DWARF, a spec fragment round trip ----

// layoutObjects compiles every struct of the generated header into a shared
// object with DWARF, and links a libnrt.so.1 from the generated version script.
func (d *demo) layoutObjects(ctx context.Context) error {
	if err := cc.Available(); err != nil {
		return err
	}
	s := d.spec
	src := filepath.Join(d.gen, "c")
	dir := filepath.Join(d.work, "layoutcheck")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tu := fmt.Sprintf("#define _GNU_SOURCE\n#include \"%s\"\n", filepath.Join(src, gen.HeaderName))
	var rev strings.Builder
	for _, r := range s.Reverse {
		fmt.Fprintf(&rev, "void %s(void) {}\n", r.Name)
	}
	for name, text := range map[string]string{"types.c": tu, "reverse.c": rev.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	if err := cc.SharedContext(ctx, dir, "libtypes.so", "libtypes.so", "", []string{"types.c"}, "-fno-eliminate-unused-debug-types"); err != nil {
		return err
	}
	if err := cc.SharedContext(ctx, dir, "libnrt.so.1", s.Release.LibNRT.SONAME, filepath.Join(src, "libnrt.map"), []string{"reverse.c", "types.c"}, "-fno-eliminate-unused-debug-types"); err != nil {
		return err
	}
	d.types, d.libnrt = filepath.Join(dir, "libtypes.so"), filepath.Join(dir, "libnrt.so.1")
	return nil
}

// show builds the objects the round trip reads too.
func (d *demo) show(ctx context.Context) error {
	if err := d.layoutObjects(ctx); err != nil {
		return err
	}
	var out bytes.Buffer
	res, err := layoutcheck.Show(ctx, d.types, "nec_version_info_t", layoutcheck.ShowOptions{Spec: d.spec, DebugDirs: elfread.DefaultDebugDirs}, &out)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
		d.printf("%s", strings.ReplaceAll(line, "\t", "    "))
	}
	for _, m := range res.Layout.Fields {
		if m.Name == "compatibility_version" && m.Offset != 48 || res.Layout.Size != 56 || len(res.Findings) > 0 {
			return fmt.Errorf("nec_version_info_t does not read back as the spec's 56-byte layout")
		}
	}
	return nil
}

func (d *demo) roundTrip(ctx context.Context) error {
	s := d.spec
	var names []string
	for _, st := range s.Structs {
		names = append(names, st.Name)
	}
	var frag bytes.Buffer
	if err := release.Extract(d.types, &frag, release.ExtractOptions{Names: names, Spec: s}); err != nil {
		return err
	}
	dir := filepath.Join(d.work, "layoutcheck", "fragment")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "structs.toml"), frag.Bytes(), 0o644); err != nil {
		return err
	}
	fs, err := spec.LoadDir(dir)
	if err != nil {
		return err
	}
	d.printf("nrtabi extract libtypes.so -> %s: %d structs, %d lines, loads as a fragment", filepath.Join(dir, "structs.toml"), len(fs.Structs), bytes.Count(frag.Bytes(), []byte("\n")))
	r, err := layoutcheck.Check(ctx, []string{d.types}, layoutcheck.Options{Spec: s, Structs: fs, StructsSrc: dir, Role: "auto", DebugDirs: elfread.DefaultDebugDirs})
	if err != nil {
		return err
	}
	d.printf("nrtabi check --spec fragment libtypes.so: %d structs checked; %s (exit %d)", len(r.Files[0].Structs), r.Verdict, r.Exit)
	if r.Exit != 0 {
		return fmt.Errorf("round trip not clean")
	}
	r, err = layoutcheck.Check(ctx, []string{d.libnrt}, layoutcheck.Options{Spec: s, StructsSrc: "spec/" + s.Release.Name, Role: "auto", DebugDirs: elfread.DefaultDebugDirs})
	if err != nil {
		return err
	}
	for _, c := range r.Files[0].Contract {
		mark := "ok  "
		if !c.OK {
			mark = "FAIL"
		}
		d.printf("%s %s", mark, c.Name)
	}
	d.printf("nrtabi check libnrt.so.1 (role %s from its SONAME): %s (exit %d)", r.Files[0].Role, r.Verdict, r.Exit)
	if r.Exit != 0 {
		return fmt.Errorf("the libnrt built from the generated version script is not clean")
	}
	return nil
}

// ---- collectives: eight NeuronCores of one process sign one replica group's
// program and bootstrap its comm; then one rank's program is reordered and
// every rank refuses the world ----

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

func (d *demo) collectives(context.Context) error {
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
					CCOpOwner: true,
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
				verdict += fmt.Sprintf(", node refcnt %d, stream %d, %d local participants", n.Refcnt, n.GetStreamID(), n.NumLocalParticipants)
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

// ---- the TCP bootstrap through the boundary: four C host processes, each
// libnrt.so.1 -> dlopen of the reference libnccom, form a world on loopback
// and agree; one of them posts a reordered program and all four refuse; then
// a mixed world of Go `nrtabi-runtime bootstrap` ranks and C hosts agrees ----

func (d *demo) bootstrap(ctx context.Context) error {
	refDir := filepath.Join(d.work, "libnccom")
	p, err := d.tree.BuildLibnccom(ctx, d.lib, refDir, builder.Libnccom{})
	if err != nil {
		return err
	}
	desc, err := describeLibnrt(p)
	if err != nil {
		return err
	}
	d.printf("reference libnccom (gcc, runtime/libnccom/*.c over the generated nrtabi.h): %s", desc)
	host := filepath.Join(d.work, "worldhost")
	if err := d.tree.BuildWorldHost(ctx, host, d.lib); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	env := []string{"LD_LIBRARY_PATH=" + d.lib + ":" + refDir, abi.EnvSockTimeout + "=5", "NRTABI_LOG_LEVEL=warn"}
	run := func(what string, ms []worldprog.Member) ([]worldprog.Run, error) {
		root, err := worldprog.FreeLoopbackRoot()
		if err != nil {
			return nil, err
		}
		runs, took, err := worldprog.Launch(ctx, ms, root, env)
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
	what, err := agreedID(runs[0].Fields["unique_id"])
	if err != nil {
		return fmt.Errorf("rank 0's unique id: %w", err)
	}
	d.printf("the agreed ncclUniqueId (from neuronGetUniqueId, broadcast over ncclBootstrapSend/Recv) %s", what)

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
// agreedID says what a rank's reported unique id holds: by default the
// world group's comm is split from the world's bootstrap, a split id
// (docs/bootstrap.md#group-comm-split); a group inited on the seed's path
// carries its root's sockaddr.
func agreedID(text string) (string, error) {
	if ap, err := netip.ParseAddrPort(text); err == nil {
		id := tcp.NewUniqueID(ap)
		return fmt.Sprintf("starts with the root's sockaddr_in (%d of %d bytes): %s",
			abi.NcclSocketAddressSize, abi.NcclUniqueIDBytes, hex.EncodeToString(id[:abi.NcclSocketAddressSize])), nil
	}
	id, err := tcp.ParseSplitIDText(text)
	if errors.Is(err, tcp.ErrNotSplit) {
		return "", fmt.Errorf("%s is neither ip:port nor a split id", strconv.Quote(cfmt.Escape(text, 256)))
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", strconv.Quote(cfmt.Escape(text, 256)), err)
	}
	return fmt.Sprintf("is a split id, the world group's comm derived from the world's bootstrap with no second root (%d of %d bytes used): %s",
		abi.SplitIDUsed, abi.NcclUniqueIDBytes, hex.EncodeToString(id[:abi.SplitIDUsed])), nil
}

func shortLine(f map[string]string) string {
	return fmt.Sprintf("rank=%s nranks=%s prev=%s next=%s cluster_id=%s unique_id=%s verdict=%s",
		f["rank"], f["nranks"], f["prev"], f["next"], f["cluster_id"], f["unique_id"], f["verdict"])
}
