package builder

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// LibnccomFile is the reference libnccom's file name (its SONAME); libnrt
// dlopens the spec's unversioned name, a symbolic link next to it.
const LibnccomFile = "libnccom.so.2"

// Libnccom says how to build the reference libnccom (runtime/libnccom).
type Libnccom struct {
	// GitHash replaces the git hash the library reports and welds into
	// nccl_nrt_git_hash (a skewed build for the fault tests).
	GitHash string
	// Sanitize builds it with AddressSanitizer and UBSan; a process loading
	// it needs libasan preloaded (SanitizerRuntime).
	Sanitize bool
	// Faults compiles in the test-only fault hooks (NCCOM_REF_FAULTS:
	// NRTABI_NCCOM_FAULT=die-leader|die-nonleader|wrong-instance|root-late, the
	// hierarchical fault worlds of runtime/e2e); never in a shipped build.
	Faults bool
}

// LibnccomSourceDir holds the reference libnccom's C sources.
func (t *Tree) LibnccomSourceDir() string { return filepath.Join(t.Root, "runtime", "libnccom") }

// libnccomCFlags are the flags every C file of the reference libnccom is
// compiled with for o: the build's, and the call-graph test's, which
// compiles each file alone.
func (t *Tree) libnccomCFlags(o Libnccom) []string {
	flags := []string{"-O2", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE", "-I" + t.CDir()}
	if o.GitHash != "" {
		flags = append(flags, fmt.Sprintf("-DNCCOM_REF_GIT_HASH=%q", o.GitHash))
	}
	if o.Faults {
		flags = append(flags, "-DNCCOM_REF_FAULTS")
	}
	if o.Sanitize {
		flags = append(flags, "-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined")
	}
	return flags
}

// BuildLibnccom compiles the reference libnccom into dir/libnccom.so.2
// (SONAME libnccom.so.2, the neuron* exports unversioned by the generated
// script, DT_NEEDED libnrt.so.1 from libnrtDir so the 20 callbacks bind
// @NRT_2.0.0) and links dir/libnccom.so to it.
func (t *Tree) BuildLibnccom(ctx context.Context, libnrtDir, dir string, o Libnccom) (string, error) {
	if err := cc.Available(); err != nil {
		return "", err
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	lib, err := filepath.Abs(libnrtDir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	srcs, err := filepath.Glob(filepath.Join(t.LibnccomSourceDir(), "*.c"))
	if err != nil || len(srcs) == 0 {
		return "", fmt.Errorf("no C sources under %s", t.LibnccomSourceDir())
	}
	sort.Strings(srcs)
	flags := append(t.libnccomCFlags(o), "-L"+lib, "-l:"+LibnrtFile, "-lpthread")
	out := filepath.Join(dir, LibnccomFile)
	tmp := filepath.Join(dir, ".build-"+LibnccomFile)
	script := filepath.Join(t.CDir(), "libnccom.map")
	if err := cc.SharedContext(ctx, dir, tmp, t.Spec.Release.LibNCCOM.SONAME, script, srcs, flags...); err != nil {
		os.Remove(tmp)
		return "", err
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", err
	}
	link := filepath.Join(dir, StubFile)
	os.Remove(link)
	if err := os.Symlink(LibnccomFile, link); err != nil {
		return "", err
	}
	return out, nil
}

// SanitizerRuntime is the AddressSanitizer runtime a process must preload
// to load a Sanitize build into a program that was not built with it.
func SanitizerRuntime(ctx context.Context) (string, error) {
	var p string
	for _, name := range []string{"libasan.so", "libubsan.so"} {
		out, err := cc.OutputContext(ctx, "-print-file-name="+name)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(out) {
			return "", fmt.Errorf("%s: the compiler has no %s (install libasan)", strings.Join(cc.Driver(), " "), name)
		}
		if p != "" {
			p += ":"
		}
		p += out
	}
	return p, nil
}
