package layoutcheck

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/spec"
)

// The round trip of the real-artefact agreement test
// (readers/elfread/realworld_test.go) on its inputs: extract --all of each
// is the same bytes twice, loads as a spec, and checking the input
// against it exits 0, CLEAN.

// realworldSources is where the agreement test's C and C++ sources are.
const realworldSources = "../readers/elfread/testdata/realworld"

// libcDebugFile is libc6-dbg's debug file of the libc this machine runs.
const libcDebugFile = "/usr/lib/debug/.build-id/93/ac61ec5a8eb1396f9fbd350e3169a558528a40.debug"

type roundInput struct {
	name, path string
	debugDirs  []string
}

// compileReal compiles a source of realworldSources into dir.
func compileReal(t *testing.T, dir, src, out string, flags ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(realworldSources, src))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, src), b, 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-o", out}, flags...)
	if !strings.Contains(strings.Join(flags, " "), "-shared") {
		args = append(args, "-c")
	}
	if err := cc.Run(dir, append(args, src)...); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, out)
}

func roundInputs(t *testing.T, f *fixtures) []roundInput {
	t.Helper()
	var ins []roundInput
	if _, err := os.Stat(libcDebugFile); err != nil {
		t.Logf("no libc input: libc's debug file is not installed (libc6-dbg): %v", err)
	} else {
		ins = append(ins, roundInput{name: "libc", path: libcDebugFile})
	}
	dir := t.TempDir()
	cxx := true
	if out, err := cc.Output("-print-prog-name=cc1plus"); err != nil || !filepath.IsAbs(out) {
		t.Logf("no C++ inputs: %s cannot compile C++ (install g++)", strings.Join(cc.Driver(), " "))
		cxx = false
	}
	for _, v := range []string{"4", "5"} {
		ins = append(ins, roundInput{name: "C DWARF " + v, path: compileReal(t, dir, "agree.c", "c"+v+".o", "-g", "-gdwarf-"+v)})
		if cxx {
			ins = append(ins, roundInput{name: "C++ DWARF " + v, path: compileReal(t, dir, "agree.cc", "cxx"+v+".o", "-g", "-gdwarf-"+v)})
		}
	}
	ins = append(ins, roundInput{name: "C -gsplit-dwarf", path: compileReal(t, dir, "agree.c", "libsplit.so", "-g", "-gsplit-dwarf", "-fPIC", "-shared")})
	if _, err := exec.LookPath("dwz"); err != nil {
		t.Logf("no dwz input: dwz not found (install the Debian package dwz): %v", err)
	} else {
		src, err := os.ReadFile(filepath.Join(realworldSources, "agree.c"))
		if err != nil {
			t.Fatal(err)
		}
		dz := t.TempDir()
		for n, s := range map[string]string{"a": string(src), "b": string(src) + "\nstruct only_b { struct bits b; char tail; } g_only_b;\n"} {
			if err := writeFile(dz, n+".c", s); err != nil {
				t.Fatal(err)
			}
			if err := cc.Shared(dz, "lib"+n+".so", "", "", []string{n + ".c"}, "-Wl,--build-id"); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("dwz", "-m", "common.debug", "-M", filepath.Join(dz, "common.debug"), "liba.so", "libb.so")
		cmd.Dir = dz
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("dwz: %v\n%s", err, out)
		}
		ins = append(ins, roundInput{name: "dwz libb.so", path: filepath.Join(dz, "libb.so"), debugDirs: []string{dz}})
	}
	ins = append(ins, roundInput{name: "fixture libnrt", path: f.libnrt}, roundInput{name: "fixture libnccom", path: f.libnccom})
	return ins
}

// TestRealworldRoundTrip: extract --all, twice byte for byte, then check
// against what it wrote: exit 0, CLEAN, on every input of the agreement
// test.
func TestRealworldRoundTrip(t *testing.T) {
	f := loadFixtures(t)
	start := time.Now()
	for _, in := range roundInputs(t, f) {
		dirs := in.debugDirs
		if dirs == nil {
			dirs = []string{t.TempDir()}
		}
		var first []byte
		var st release.ExtractStats
		for i := range 2 {
			var buf bytes.Buffer
			opt := release.ExtractOptions{All: true, Jobs: 2, Spec: f.sp, DebugDirs: dirs}
			if i == 0 {
				opt.Stats = &st
			}
			if err := release.Extract(in.path, &buf, opt); err != nil {
				t.Fatalf("%s: extract --all: %v", in.name, err)
			}
			if i == 0 {
				first = buf.Bytes()
			} else if !bytes.Equal(first, buf.Bytes()) {
				t.Fatalf("%s: two extracts differ (%d bytes against %d)", in.name, buf.Len(), len(first))
			}
		}
		if st.Structs == 0 {
			t.Fatalf("%s: extract --all wrote no struct: %+v", in.name, st)
		}
		specDir := t.TempDir()
		if err := os.WriteFile(filepath.Join(specDir, "structs.toml"), first, 0o644); err != nil {
			t.Fatal(err)
		}
		frag, err := spec.LoadDir(specDir)
		if err != nil {
			t.Fatalf("%s: the fragment does not load: %v", in.name, err)
		}
		r := runCheck(t, f, Options{Structs: frag, StructsSrc: specDir, DebugDirs: dirs}, in.path)
		if r.Exit != 0 || !strings.HasPrefix(r.Verdict, "CLEAN") {
			var b bytes.Buffer
			r.WriteText(&b)
			out := b.String()
			if len(out) > 8000 {
				out = out[:8000] + "\n..."
			}
			t.Errorf("%s: checking against its own --all fragment: exit %d, %s\n%s", in.name, r.Exit, r.Verdict, out)
			continue
		}
		t.Logf("%s: %d structs, %d enums extracted; %s", in.name, st.Structs, st.Enums, r.Verdict)
	}
	t.Logf("round trip in %v", time.Since(start).Round(time.Millisecond))
}
