package builder

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// StubFile is the name a libnccom double is built under: the name ncclInit
// dlopens, so LD_LIBRARY_PATH=<its directory> is enough to select it.
const StubFile = "libnccom.so"

// Stub is one libnccom test double: the generated stub source with macros.
type Stub struct {
	Name    string   // directory under the stubs directory
	About   string   // one line for listings
	Defines []string // -D flags, without the -D
	// VersionNode, when set, puts the neuron* exports under this version
	// node instead of the generated script's unversioned exports.
	VersionNode string
	// ForwardOnly stubs reference no reverse callback and do not link
	// against libnrt: they load into any process, e.g. a Go test binary.
	ForwardOnly bool
}

// Stub names used by the tests, the demo and the benchmark.
const (
	StubGood             = "good"
	StubNoProbe          = "no-probe"
	StubFailRC           = "fail-rc"
	StubForwardVersioned = "forward-versioned"
	StubForwardOnly      = "forward-only"
)

// StubIncompatible names the variant that reports the wrong compatibility id.
func (t *Tree) StubIncompatible() string { return "compat" + strconv.FormatUint(t.WrongCompat(), 10) }

// StubMissing names the variant without the entry point of dlsym index i.
func StubMissing(i int) string { return "missing-" + strconv.Itoa(i) }

// MissingIndices are the dlsym indices whose entry points the missing-symbol
// variants leave out: the first after the probe, the middle one, the last.
func (t *Tree) MissingIndices() []int {
	n := len(t.Spec.Forward)
	return []int{1, n / 2, n - 1}
}

// WrongCompat is the compatibility id the incompatible double reports: one
// below the spec's.
func (t *Tree) WrongCompat() uint64 {
	c := t.Spec.ConstantByName("NCCOM_COMPAT_ID")
	v, _ := c.Int()
	return uint64(v) - 1
}

// Stubs lists every variant make nccom-stubs builds.
func (t *Tree) Stubs() []Stub {
	byIndex := t.Spec.ByIndex()
	probe := byIndex[0].Name
	list := []Stub{
		{Name: StubGood, About: "all entry points, compatibility id " + strconv.FormatUint(t.WrongCompat()+1, 10)},
		{Name: t.StubIncompatible(), About: "reports compatibility id " + strconv.FormatUint(t.WrongCompat(), 10),
			Defines: []string{"NCCOM_STUB_COMPAT=" + strconv.FormatUint(t.WrongCompat(), 10)}},
		{Name: StubNoProbe, About: "no " + probe, Defines: []string{"NCCOM_STUB_OMIT_" + probe}},
	}
	for _, i := range t.MissingIndices() {
		name := byIndex[i].Name
		list = append(list, Stub{Name: StubMissing(i), About: fmt.Sprintf("no %s (dlsym #%d)", name, i), Defines: []string{"NCCOM_STUB_OMIT_" + name}})
	}
	list = append(list,
		Stub{Name: StubFailRC, About: "every entry point returns NRT_INVALID", Defines: []string{"NCCOM_STUB_RC=NRT_INVALID"}},
		Stub{Name: StubForwardVersioned, About: "neuron* exports under a version node", VersionNode: "NCCOM_" + t.Spec.Release.Name},
		Stub{Name: StubForwardOnly, About: "no reverse imports, no libnrt dependency", Defines: []string{"NCCOM_STUB_NO_REVERSE"}, ForwardOnly: true},
		Stub{Name: StubForwardOnly + "-" + t.StubIncompatible(), About: "forward-only, compatibility id " + strconv.FormatUint(t.WrongCompat(), 10),
			Defines: []string{"NCCOM_STUB_NO_REVERSE", "NCCOM_STUB_COMPAT=" + strconv.FormatUint(t.WrongCompat(), 10)}, ForwardOnly: true},
		Stub{Name: StubForwardOnly + "-" + StubFailRC, About: "forward-only, every entry point returns NRT_INVALID",
			Defines: []string{"NCCOM_STUB_NO_REVERSE", "NCCOM_STUB_RC=NRT_INVALID"}, ForwardOnly: true},
	)
	return list
}

// StubByName finds a variant.
func (t *Tree) StubByName(name string) (Stub, error) {
	for _, s := range t.Stubs() {
		if s.Name == name {
			return s, nil
		}
	}
	return Stub{}, fmt.Errorf("no libnccom test double named %q", name)
}

// BuildStub compiles a variant into stubsDir/<name>/libnccom.so. Unless the
// variant is forward-only it links against libnrtDir/libnrt.so.1, which
// records DT_NEEDED libnrt.so.1 and binds every reverse import to its node.
func (t *Tree) BuildStub(ctx context.Context, libnrtDir, stubsDir string, st Stub) (string, error) {
	if err := cc.Available(); err != nil {
		return "", err
	}
	dir, err := filepath.Abs(filepath.Join(stubsDir, st.Name))
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	script := filepath.Join(t.CDir(), "libnccom.map")
	if st.VersionNode != "" {
		var b strings.Builder
		fmt.Fprintf(&b, "%s {\n  global:\n", st.VersionNode)
		for _, f := range t.Spec.ByIndex() {
			fmt.Fprintf(&b, "    %s;\n", f.Name)
		}
		b.WriteString("  local:\n    *;\n};\n")
		script = filepath.Join(dir, "libnccom.map")
		if err := writeFile(script, []byte(b.String())); err != nil {
			return "", err
		}
	}
	flags := append([]string{"-O2", "-I" + t.CDir()}, cc.Strict...)
	for _, d := range st.Defines {
		flags = append(flags, "-D"+d)
	}
	if !st.ForwardOnly {
		abs, err := filepath.Abs(libnrtDir)
		if err != nil {
			return "", err
		}
		flags = append(flags, "-L"+abs, "-l:"+LibnrtFile)
	}
	out := filepath.Join(dir, StubFile)
	src := filepath.Join(t.CDir(), "nccom_stub.c")
	if err := cc.SharedContext(ctx, dir, out, t.Spec.Release.LibNCCOM.SONAME, script, []string{src}, flags...); err != nil {
		return "", err
	}
	return out, nil
}

// BuildStubs builds every variant; forward-only ones need no libnrt.
func (t *Tree) BuildStubs(ctx context.Context, libnrtDir, stubsDir string) ([]string, error) {
	var out []string
	for _, st := range t.Stubs() {
		p, err := t.BuildStub(ctx, libnrtDir, stubsDir, st)
		if err != nil {
			return nil, fmt.Errorf("stub %s: %w", st.Name, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// NetPluginDir is where BuildNetPlugin puts libnccom-net.so under a stubs
// directory.
const NetPluginDir = "net-plugin"

// BuildNetPlugin compiles a net-plugin double: a libnccom-net.so exporting
// the spec's ncclNetPlugin_v* tables (all NULL), enough for the soft load.
func (t *Tree) BuildNetPlugin(ctx context.Context, stubsDir string) (string, error) {
	dir, err := filepath.Abs(filepath.Join(stubsDir, NetPluginDir))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "/* A %s double for release %s: the plugin tables, empty. */\n", t.Spec.Release.LibNCCOMNet.File, t.Spec.Release.Name)
	for _, o := range t.Spec.Release.LibNCCOMNet.Objects {
		fmt.Fprintf(&b, "void *%s[%d];\n", o.Name, o.Slots)
	}
	src := filepath.Join(dir, "net_plugin.c")
	if err := writeFile(src, []byte(b.String())); err != nil {
		return "", err
	}
	out := filepath.Join(dir, t.Spec.Release.LibNCCOMNet.File)
	if err := cc.SharedContext(ctx, dir, out, t.Spec.Release.LibNCCOMNet.File, "", []string{src}, cc.Strict...); err != nil {
		return "", err
	}
	return out, nil
}

// BuildMinimalLibnrt compiles a libnrt.so.1 with no version information at
// all: the 20 callbacks as empty functions and no libc use, so the file has
// neither .gnu.version_d nor .gnu.version. A Go-built library always carries
// .gnu.version (its glibc imports are versioned), so this is the only way to
// reach the loader's behaviour for a fully unversioned libnrt.
func (t *Tree) BuildMinimalLibnrt(ctx context.Context, dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("/* A libnrt.so.1 with no version information, for the dynamic-linker matrix. */\n")
	for _, r := range t.Spec.Reverse {
		fmt.Fprintf(&b, "void %s(void);\nvoid %s(void) {}\n", r.Name, r.Name)
	}
	src := filepath.Join(dir, "minimal_libnrt.c")
	if err := writeFile(src, []byte(b.String())); err != nil {
		return "", err
	}
	out := filepath.Join(dir, LibnrtFile)
	if err := cc.SharedContext(ctx, dir, out, t.Spec.Release.LibNRT.SONAME, "", []string{src}, cc.Strict...); err != nil {
		return "", err
	}
	return out, nil
}

// BuildProgram compiles and links C sources into an executable that can
// include nrtabi.h, nrt_slots.h and nrtabi_runtime.h. libs are extra
// link arguments (e.g. "-ldl").
func (t *Tree) BuildProgram(ctx context.Context, out string, srcs []string, flags ...string) error {
	if err := cc.Available(); err != nil {
		return err
	}
	args := append([]string{"-O2", "-g", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE",
		"-I" + t.CDir(), "-I" + t.RuntimeHeaderDir(), "-o", out}, srcs...)
	return cc.RunContext(ctx, filepath.Dir(out), append(args, flags...)...)
}

// HostSource is the end-to-end host program: a C program linked against
// libnrt.so.1 that drives nrtabi_init and the forward and reverse calls.
func (t *Tree) HostSource() string {
	return filepath.Join(t.Root, "runtime", "e2e", "testdata", "common", "host.c")
}

// LinkHostSource is the link-matrix host: it dlopens a libnrt variant.
func (t *Tree) LinkHostSource() string {
	return filepath.Join(t.Root, "runtime", "e2e", "testdata", "common", "linkhost.c")
}

// BuildHost builds the end-to-end host at out, linked against
// libnrtDir/libnrt.so.1.
func (t *Tree) BuildHost(ctx context.Context, out, libnrtDir string) error {
	abs, err := filepath.Abs(libnrtDir)
	if err != nil {
		return err
	}
	return t.BuildProgram(ctx, out, []string{t.HostSource()}, "-L"+abs, "-l:"+LibnrtFile, "-lpthread", "-ldl")
}

// BuildLinkHost builds the link-matrix host at out.
func (t *Tree) BuildLinkHost(ctx context.Context, out string) error {
	return t.BuildProgram(ctx, out, []string{t.LinkHostSource()}, "-ldl")
}

// WorldHostSource is the world host: one rank of a TCP world through libnrt
// and the reference libnccom (nrtabi_bootstrap_world).
func (t *Tree) WorldHostSource() string {
	return filepath.Join(t.Root, "runtime", "e2e", "testdata", "common", "worldhost.c")
}

// BuildWorldHost builds the world host at out, linked against
// libnrtDir/libnrt.so.1.
func (t *Tree) BuildWorldHost(ctx context.Context, out, libnrtDir string) error {
	abs, err := filepath.Abs(libnrtDir)
	if err != nil {
		return err
	}
	return t.BuildProgram(ctx, out, []string{t.WorldHostSource()}, "-L"+abs, "-l:"+LibnrtFile)
}

// EdgesSource calls every neuron* export of a libnccom with bad arguments.
func (t *Tree) EdgesSource() string {
	return filepath.Join(t.Root, "runtime", "e2e", "testdata", "common", "nccomedges.c")
}

// BuildEdges builds it at out, linked against libnccomDir/libnccom.so.2 and
// libnrtDir/libnrt.so.1.
func (t *Tree) BuildEdges(ctx context.Context, out, libnrtDir, libnccomDir string) error {
	nrt, err := filepath.Abs(libnrtDir)
	if err != nil {
		return err
	}
	nc, err := filepath.Abs(libnccomDir)
	if err != nil {
		return err
	}
	return t.BuildProgram(ctx, out, []string{t.EdgesSource()}, "-L"+nc, "-l:"+LibnccomFile, "-L"+nrt, "-l:"+LibnrtFile)
}
