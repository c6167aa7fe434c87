package builder

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// NetDouble is one variant of the net-plugin double of runtime/netplugin: a
// libnccom-net.so over TCP exporting the spec's ncclNetPlugin_v6/_v5/_v4
// tables, or a fault variant of it built from the same source
// (docs/net-seam.md#the-double).
type NetDouble struct {
	Name    string   // directory under the doubles directory
	About   string   // one line for listings
	Defines []string // -D flags, without the -D
}

// Net-plugin double variants.
const (
	NetDoubleGood       = "good"
	NetDoubleV5Only     = "v5-only"
	NetDoubleV4Only     = "v4-only"
	NetDoubleNoTables   = "no-tables"
	NetDoubleNullIsend  = "null-isend"
	NetDoubleFailMidway = "fail-after-1mib"
)

// NetDoubles are the variants the tests build.
func NetDoubles() []NetDouble {
	return []NetDouble{
		{NetDoubleGood, "all three tables", nil},
		{NetDoubleV5Only, "ncclNetPlugin_v5 and _v4, no _v6", []string{"NETPLUGIN_NO_V6"}},
		{NetDoubleV4Only, "only ncclNetPlugin_v4", []string{"NETPLUGIN_NO_V6", "NETPLUGIN_NO_V5"}},
		{NetDoubleNoTables, "no table at all", []string{"NETPLUGIN_NO_V6", "NETPLUGIN_NO_V5", "NETPLUGIN_NO_V4"}},
		{NetDoubleNullIsend, "every table's isend NULL", []string{"NETPLUGIN_NULL_MEMBER=isend"}},
		{NetDoubleFailMidway, "a send comm fails once 1 MiB went out", []string{"NETPLUGIN_FAIL_AFTER=1048576"}},
	}
}

// NetDoubleByName is the variant called name.
func NetDoubleByName(name string) (NetDouble, error) {
	for _, d := range NetDoubles() {
		if d.Name == name {
			return d, nil
		}
	}
	return NetDouble{}, fmt.Errorf("unknown net-plugin double %q", name)
}

// NetDoubleSourceDir holds the double's C sources.
func (t *Tree) NetDoubleSourceDir() string { return filepath.Join(t.Root, "runtime", "netplugin") }

// BuildNetDouble compiles variant d into dir/<d.Name>/libnccom-net.so (the
// spec's net library name, so NRTABI_NET_PLUGIN or LD_LIBRARY_PATH selects
// it); sanitize adds AddressSanitizer and UBSan.
func (t *Tree) BuildNetDouble(ctx context.Context, dir string, d NetDouble, sanitize bool) (string, error) {
	if err := cc.Available(); err != nil {
		return "", err
	}
	out, err := filepath.Abs(filepath.Join(dir, d.Name))
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	srcs, err := filepath.Glob(filepath.Join(t.NetDoubleSourceDir(), "*.c"))
	if err != nil || len(srcs) == 0 {
		return "", fmt.Errorf("no C sources under %s", t.NetDoubleSourceDir())
	}
	sort.Strings(srcs)
	flags := []string{"-O2", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE", "-fvisibility=hidden", "-I" + t.CDir()}
	for _, def := range d.Defines {
		flags = append(flags, "-D"+def)
	}
	if sanitize {
		flags = append(flags, "-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined")
	}
	lib := t.Spec.Release.LibNCCOMNet.File
	so := filepath.Join(out, lib)
	tmp := filepath.Join(out, ".build-"+lib)
	if err := cc.SharedContext(ctx, out, tmp, lib, "", srcs, flags...); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return so, os.Rename(tmp, so)
}

// BuildLibnrtDouble compiles the C libnrt.so.1 of the net-plugin tests
// (runtime/netplugin/nettest/testdata/libnrt_double.c: the 20 callbacks
// @@NRT_2.0.0, nrt_get_libnccl_net soft-loading NRTABI_NET_PLUGIN) into dir.
func (t *Tree) BuildLibnrtDouble(ctx context.Context, dir string) (string, error) {
	if err := cc.Available(); err != nil {
		return "", err
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src := filepath.Join(t.NetDoubleSourceDir(), "nettest", "testdata", "libnrt_double.c")
	out := filepath.Join(dir, LibnrtFile)
	flags := []string{"-O2", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE", "-I" + t.CDir(), "-ldl", "-lpthread"}
	script := filepath.Join(t.CDir(), "libnrt.map")
	return out, cc.SharedContext(ctx, dir, out, t.Spec.Release.LibNRT.SONAME, script, []string{src}, flags...)
}

// NetHostSource drives the net entry points of a libnccom
// (runtime/netplugin/nettest/testdata/nethost.c).
func (t *Tree) NetHostSource() string {
	return filepath.Join(t.NetDoubleSourceDir(), "nettest", "testdata", "nethost.c")
}
