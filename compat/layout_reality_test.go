package compat_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/compat"
	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// The silent class against reality: a C libnrt of release 2.31.24 (the
// reverse callbacks @@NRT_2.0.0, its release name, a reader of
// nec_version_info_t by its own layout) and the generated libnccom double
// linked against it, loaded by a C driver through ld.so; the driver has
// libnccom's probe write the struct and libnrt's reader read it back, and
// compares the bytes' meaning. One libnrt uses the spec's layout, one a
// struct grown on its side (git_hash 24 bytes), and a libnccom built
// without DWARF must be "unknown", never "same"
// (docs/nrtabi-compat.md#prediction-against-reality). Cost: five cc runs,
// about 2 s.

const release = "2.31.24"

func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("no module root above the package: %v", err)
	}
	return dir
}

// libnrtSource is a C libnrt: every reverse callback of sp, the release
// name, and a reader of the compat id by the layout in structDef.
func libnrtSource(sp *spec.Spec, structDef string) string {
	var b strings.Builder
	b.WriteString("#include <stdint.h>\n")
	b.WriteString(structDef)
	fmt.Fprintf(&b, "const char nrtabi_release_name[] = %q;\n", sp.Release.Name)
	b.WriteString("uint64_t fixture_read_compat(const void *p);\n")
	b.WriteString("uint64_t fixture_read_compat(const void *p) { return ((const struct nec_version_info *)p)->compatibility_version; }\n")
	for _, r := range sp.Reverse {
		fmt.Fprintf(&b, "void %s(void);\nvoid %s(void) {}\n", r.Name, r.Name)
	}
	return b.String()
}

const specLayout = "struct nec_version_info { uint64_t major, minor, patch, maintenance; char git_hash[16]; uint64_t compatibility_version; };\n"
const grownLayout = "struct nec_version_info { uint64_t major, minor, patch, maintenance; char git_hash[24]; uint64_t compatibility_version; };\n"

const driverSource = `#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	void *nrt = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	if (nrt == NULL) { printf("libnrt: %s\n", dlerror()); return 1; }
	void *nc = dlopen(argv[2], RTLD_NOW);
	if (nc == NULL) { printf("libnccom: %s\n", dlerror()); return 1; }
	void (*probe)(void *, uint32_t) = (void (*)(void *, uint32_t))dlsym(nc, "neuronGetVersionInfo");
	uint64_t (*rd)(const void *) = (uint64_t (*)(const void *))dlsym(nrt, "fixture_read_compat");
	if (probe == NULL || rd == NULL) { printf("dlsym failed\n"); return 1; }
	unsigned char buf[128];
	memset(buf, 0, sizeof buf);
	probe(buf, 56);
	uint64_t wrote;
	memcpy(&wrote, buf + 48, sizeof wrote);
	printf("wrote %llu read %llu\n", (unsigned long long)wrote, (unsigned long long)rd(buf));
	return 0;
}
`

type fixtures struct{ dir, good, grown, nccom, stripped, driver string }

func build(t *testing.T) fixtures {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	sp, err := compiled.Load(release)
	if err != nil {
		t.Fatal(err)
	}
	cdir := filepath.Join(root(t), "generated", release, "c")
	d := t.TempDir()
	f := fixtures{dir: d}
	var script strings.Builder
	script.WriteString(sp.Reverse[0].Version + " {\n  global:\n    nrtabi_release_name;\n    fixture_read_compat;\n")
	for _, r := range sp.Reverse {
		fmt.Fprintf(&script, "    %s;\n", r.Name)
	}
	script.WriteString("  local:\n    *;\n};\n")
	write := func(name, text string) string {
		p := filepath.Join(d, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mapFile := write("libnrt.map", script.String())
	for _, lib := range []struct {
		dir, layout string
		out         *string
	}{{"good", specLayout, &f.good}, {"grown", grownLayout, &f.grown}} {
		dir := filepath.Join(d, lib.dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		src := write(lib.dir+"_libnrt.c", libnrtSource(sp, lib.layout))
		*lib.out = filepath.Join(dir, "libnrt.so.1")
		if err := cc.SharedContext(ctx, dir, *lib.out, "libnrt.so.1", mapFile, []string{src}, cc.Strict...); err != nil {
			t.Fatal(err)
		}
	}
	stub := filepath.Join(cdir, "nccom_stub.c")
	nccomFlags := append([]string{"-O2", "-I" + cdir, "-L" + filepath.Dir(f.good), "-l:libnrt.so.1"}, cc.Strict...)
	f.nccom = filepath.Join(d, "libnccom.so")
	if err := cc.SharedContext(ctx, d, f.nccom, "libnccom.so.2", filepath.Join(cdir, "libnccom.map"), []string{stub}, nccomFlags...); err != nil {
		t.Fatal(err)
	}
	f.stripped = filepath.Join(d, "libnccom-nodebug.so")
	if err := cc.SharedContext(ctx, d, f.stripped, "libnccom.so.2", filepath.Join(cdir, "libnccom.map"), []string{stub}, append(nccomFlags, "-g0")...); err != nil {
		t.Fatal(err)
	}
	f.driver = filepath.Join(d, "driver")
	if err := cc.RunContext(ctx, d, "-O1", "-Wall", "-Wextra", "-Werror", "-o", f.driver, write("driver.c", driverSource), "-ldl"); err != nil {
		t.Fatal(err)
	}
	return f
}

func set(t *testing.T) *compat.Set {
	t.Helper()
	var specs []*spec.Spec
	for _, r := range spec.Releases() {
		sp, err := compiled.Load(r)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, sp)
	}
	return compat.NewSet(specs)
}

// seam runs the driver: whether libnrt read the compat id libnccom wrote.
func seam(t *testing.T, f fixtures, libnrt, libnccom string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, f.driver, libnrt, libnccom)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH=")
	if err := cmd.Run(); err != nil {
		t.Fatalf("driver: %v\n%s", err, out.String())
	}
	var wrote, read uint64
	if _, err := fmt.Sscanf(out.String(), "wrote %d read %d", &wrote, &read); err != nil {
		t.Fatalf("driver printed %q: %v", out.String(), err)
	}
	return wrote == read
}

func TestLayoutAgainstReality(t *testing.T) {
	f := build(t)
	s := set(t)
	for _, c := range []struct {
		name, libnrt, libnccom string
		layout                 string
		verdict                compat.Class
	}{
		{"same layout", f.good, f.nccom, compat.LayoutSame, compat.Loads},
		{"struct grown on libnrt's side", f.grown, f.nccom, compat.LayoutDiffers, compat.Layout},
		{"libnccom without DWARF", f.grown, f.stripped, compat.LayoutUnknown, compat.Loads},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := compat.Predict(t.Context(), s, c.libnrt, c.libnccom, "", compat.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Layout != c.layout || r.Verdict != c.verdict {
				t.Fatalf("layout %s verdict %s, want %s %s\n%+v\nunseen %q", r.Layout, r.Verdict, c.layout, c.verdict, r.Findings, r.Unseen)
			}
			agreed := seam(t, f, c.libnrt, c.libnccom)
			switch r.Layout {
			case compat.LayoutSame:
				if !agreed {
					t.Error("compat says the layouts are the same; libnrt read another compat id than libnccom wrote")
				}
			case compat.LayoutDiffers:
				if agreed {
					t.Error("compat says the layouts differ; libnrt read the compat id libnccom wrote")
				}
				if !strings.Contains(predictedLayoutSubject(r), "nec_version_info") {
					t.Errorf("the layout finding names %q, not nec_version_info_t", predictedLayoutSubject(r))
				}
			case compat.LayoutUnknown:
				if r.Exit == compat.ExitLoads {
					t.Error("a side without DWARF exits 0")
				}
				if len(r.Unseen) == 0 {
					t.Error("layout unknown and nothing listed as unseen")
				}
			}
		})
	}
}

func predictedLayoutSubject(r *compat.Report) string {
	for _, f := range r.Findings {
		if f.Class == compat.Layout {
			return f.Subject
		}
	}
	return ""
}

// TestCompatIDUnseen: a probe that stores a value it computes, not a
// constant, leaves the compat id unseen: the verdict is unknown and the
// exit 4, never loads.
func TestCompatIDUnseen(t *testing.T) {
	f := build(t)
	cdir := filepath.Join(root(t), "generated", release, "c")
	out := filepath.Join(f.dir, "libnccom-computed.so")
	flags := append([]string{"-O2", "-I" + cdir, "-L" + filepath.Dir(f.good), "-l:libnrt.so.1",
		"-DNCCOM_STUB_COMPAT=(*(volatile uint64_t *)out)"}, cc.Strict...)
	if err := cc.SharedContext(t.Context(), f.dir, out, "libnccom.so.2", filepath.Join(cdir, "libnccom.map"), []string{filepath.Join(cdir, "nccom_stub.c")}, flags...); err != nil {
		t.Fatal(err)
	}
	r, err := compat.Predict(t.Context(), set(t), f.good, out, "", compat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != compat.Unknown || r.Exit != compat.ExitUnknown || len(r.Unseen) == 0 || !strings.Contains(r.Unseen[0], "compatibility id") {
		t.Errorf("verdict %s exit %d unseen %q", r.Verdict, r.Exit, r.Unseen)
	}
}

// TestNeededSONAME: libnccom needs libnrt.so.1 by name; a libnrt with
// another SONAME is not it, and ld.so goes looking for the named file.
func TestNeededSONAME(t *testing.T) {
	f := build(t)
	sp, err := compiled.Load(release)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(f.dir, "other")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "nrt.c")
	if err := os.WriteFile(src, []byte(libnrtSource(sp, specLayout)), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "libnrt.so.9")
	if err := cc.SharedContext(t.Context(), dir, other, "libnrt.so.9", filepath.Join(f.dir, "libnrt.map"), []string{src}, cc.Strict...); err != nil {
		t.Fatal(err)
	}
	r, err := compat.Predict(t.Context(), set(t), other, f.nccom, "", compat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != compat.Reverse || len(r.Findings) == 0 || r.Findings[0].Subject != "libnrt.so.1" {
		t.Fatalf("verdict %s %+v", r.Verdict, r.Findings)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, f.driver, other, f.nccom)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH=")
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "libnrt.so.1: cannot open shared object file") {
		t.Errorf("the real load did not fail on libnrt.so.1: %s", out)
	}
}
