package elfread

import (
	"context"
	"debug/elf"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/realworld"
	"github.com/nrtabi/nrtabi/internal/testbin"
)

// TestPaholeAgreeWide is the opt-in wide run of the agreement test
// (NRTABI_REALWORLD=1; not in make test): every ELF file with DWARF under
// /usr/lib/debug and the directories NRTABI_REALWORLD_DIRS lists
// (colon-separated; extracted -dbg packages), libstdc++'s debug file, a
// Rust and a Go binary with debug info, C and C++ objects at -O2 -g.
// An input pahole prints nothing of (a dwz'd debug file: pahole 1.24
// does not follow DW_TAG_imported_unit) is held to gdb's ptype/o instead
// (gdbptype_test.go), classes "gdb/...". It prints how many
// inputs and structs it checked and every disagreement class with one
// example.
func TestPaholeAgreeWide(t *testing.T) {
	roots := realworld.Roots(t)
	only := os.Getenv("NRTABI_REALWORLD_ONLY") != "" // the DIRS alone (a rerun)
	needPahole(t)
	start := time.Now()
	var ins []agreeInput
	for _, root := range roots {
		files := debugFiles(t, root)
		t.Logf("%s: %d ELF files with DWARF", root, len(files))
		dirs := []string{root}
		if base := filepath.Join(root, "usr", "lib", "debug"); isDir(base) {
			dirs = []string{base}
		}
		if sup := supplementTree(t, dirs[0]); sup != "" {
			// an extracted package's dwz supplements are named by their
			// installed path (/usr/lib/debug/.dwz/<triplet>/...): they are
			// found here by build-id instead
			dirs = append(dirs, sup)
		}
		sysroot := ""
		if isDir(filepath.Join(root, "usr", "lib", "debug")) {
			sysroot = root
		}
		for _, f := range files {
			ins = append(ins, agreeInput{name: f, model: f, pahole: []string{f}, dirs: dirs, sysroot: sysroot})
		}
	}
	if only {
		// the DIRS alone
	} else if _, err := os.Stat(libstdcxxDebug); err == nil {
		ins = append(ins, agreeInput{name: "libstdc++", model: libstdcxxDebug, pahole: []string{libstdcxxDebug}})
	} else {
		t.Logf("no libstdc++ debug file (libstdc++6-12-dbg): %v", err)
	}
	dir := t.TempDir()
	if only {
		// the DIRS alone
	} else if err := cc.Available(); err == nil {
		o := compiled(t, dir, "agree.c", "c-O2.o", "-g", "-O2")
		ins = append(ins, agreeInput{name: "C -O2 -g", model: o, pahole: []string{o}})
		o = compiled(t, dir, "agree.cc", "cxx-O2.o", "-g", "-O2")
		ins = append(ins, agreeInput{name: "C++ -O2 -g", model: o, pahole: []string{o}})
	} else {
		t.Logf("no C inputs: %v", err)
	}
	if only {
		// the DIRS alone
	} else if p, why := rustBinary(t); p != "" {
		ins = append(ins, agreeInput{name: "Rust", model: p, pahole: []string{p}})
	} else {
		t.Logf("no Rust input: %s", why)
	}
	if only {
		// the DIRS alone
	} else if p, why := goBinary(t); p != "" {
		ins = append(ins, agreeInput{name: "Go", model: p, pahole: []string{p}})
	} else {
		t.Logf("no Go input: %s", why)
	}
	var all agreeStats
	var errs, empty, pgood, gdbGood int
	var unchecked []string
	var otherModel []string
	for _, in := range ins {
		if f, err := elf.Open(in.model); err == nil {
			lp64 := f.Class == elf.ELFCLASS64 && (f.Machine == elf.EM_X86_64 || f.Machine == elf.EM_AARCH64)
			f.Close()
			if !lp64 {
				// Refused by design (checkDataModel): spec layouts are LP64.
				otherModel = append(otherModel, in.name)
				continue
			}
		}
		st, err := checkInput(t, in, 5*time.Minute)
		if err != nil {
			t.Logf("%s: %v", in.name, err)
			errs++
			all.Diffs = append(all.Diffs, disagreement{Class: "input-error", File: in.name, Pahole: "-", Model: err.Error()})
			continue
		}
		if st.Structs == 0 {
			gs, err := gdbInput(t, in)
			switch {
			case err != nil:
				t.Logf("%s: gdb: %v", in.name, err)
				errs++
				all.Diffs = append(all.Diffs, disagreement{Class: "input-error/gdb", File: in.name, Pahole: "-", Model: err.Error()})
				continue
			case gs.Structs == 0:
				empty++
				unchecked = append(unchecked, in.name)
			default:
				gdbGood++
			}
			st = gs
		} else {
			pgood++
		}
		if in.name == "libstdc++" || !strings.HasPrefix(in.name, "/") {
			t.Logf("%s: %d structs, %d members, %d disagreements", in.name, st.Structs, st.Members, len(st.Diffs))
		}
		all.add(st)
	}
	logAll(t, all.Diffs)
	lines, failing := summarize(all.Diffs)
	t.Logf("%d inputs (%d held to pahole, %d to gdb ptype/o where pahole printed nothing, %d neither printed a struct of, %d errors): %d structs, %d members compared in %v",
		len(ins)-len(otherModel), pgood, gdbGood, empty, errs, all.Structs, all.Members, time.Since(start).Round(time.Second))
	if len(unchecked) > 0 {
		t.Logf("no struct compared of: %s", strings.Join(unchecked[:min(len(unchecked), 5)], ", "))
	}
	if len(otherModel) > 0 {
		t.Logf("not compared: %d objects of another data model than LP64, which the readers refuse by design (checkDataModel), e.g. %s", len(otherModel), otherModel[0])
	}
	for _, l := range lines {
		t.Log(l)
	}
	if len(failing) > 0 {
		t.Errorf("disagreements: %v", failing)
	}
}

// supplementTree links the dwz supplements under root/.dwz into a
// build-id tree of a temporary directory; "" when there are none.
func supplementTree(t *testing.T, root string) string {
	var sups []string
	_ = filepath.WalkDir(filepath.Join(root, ".dwz"), func(p string, de fs.DirEntry, err error) error {
		if err == nil && de.Type().IsRegular() {
			sups = append(sups, p)
		}
		return nil
	})
	if len(sups) == 0 {
		return ""
	}
	dir := t.TempDir()
	for _, p := range sups {
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		id := noteBuildID(f)
		f.Close()
		if len(id) < 4 {
			continue
		}
		sub := filepath.Join(dir, ".build-id", id[:2])
		if os.MkdirAll(sub, 0o755) == nil {
			_ = os.Symlink(p, filepath.Join(sub, id[2:]+".debug"))
		}
	}
	return dir
}

// noteBuildID is the hex build-id of an ELF file's NT_GNU_BUILD_ID note.
func noteBuildID(f *elf.File) string {
	s := f.Section(".note.gnu.build-id")
	if s == nil {
		return ""
	}
	b, err := s.Data()
	if err != nil || len(b) < 16 {
		return ""
	}
	namesz := int(f.ByteOrder.Uint32(b[0:4]))
	descsz := int(f.ByteOrder.Uint32(b[4:8]))
	start := 12 + (namesz+3)&^3
	if start+descsz > len(b) {
		return ""
	}
	return fmt.Sprintf("%x", b[start:start+descsz])
}

// maxGdbNames bounds the names asked of gdb per input.
const maxGdbNames = 1500

// gdbInput holds an input's graph to gdb's ptype/o of every named
// aggregate it has.
func gdbInput(t *testing.T, in agreeInput) (agreeStats, error) {
	if _, err := exec.LookPath("gdb"); err != nil {
		return agreeStats{}, nil
	}
	d, err := OpenDebug(context.Background(), in.model, Lookup{Dirs: in.dirs, AllowMissing: true})
	if err != nil {
		return agreeStats{}, err
	}
	defer d.Close()
	g, err := d.AllTypes(context.Background(), 2)
	if err != nil {
		return agreeStats{}, err
	}
	byLocal := modelAggregates(g)
	names := gdbNames(byLocal)
	if len(names) > maxGdbNames {
		// gdb takes seconds per thousand names of a large C++ file: an
		// even sample of them
		t.Logf("%s: %d names, %d of them (every %dth) asked of gdb", in.name, len(names), maxGdbNames, len(names)/maxGdbNames)
		step := len(names) / maxGdbNames
		var sample []string
		for i := 0; i < len(names) && len(sample) < maxGdbNames; i += step {
			sample = append(sample, names[i])
		}
		names = sample
	}
	gs, err := runGdbPtype(context.Background(), in.model, in.sysroot, names, 10*time.Minute)
	if err != nil {
		return agreeStats{}, err
	}
	return agreeGdb(byLocal, in.name, gs), nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// debugFiles lists the regular ELF files with a .debug_info under root
// (not the dwz supplements of .dwz/, which are read as parts).
func debugFiles(t *testing.T, root string) []string {
	var out []string
	err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if de.IsDir() && de.Name() == ".dwz" {
			return filepath.SkipDir
		}
		if !de.Type().IsRegular() {
			return nil
		}
		f, err := elf.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		if f.Section(".debug_info") != nil || f.Section(".zdebug_info") != nil {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Logf("walking %s: %v", root, err)
	}
	return out
}

// rustBinary builds a trivial crate offline with debug info; "" and why
// when cargo is absent or the build fails.
func rustBinary(t *testing.T) (string, string) {
	cargo, err := exec.LookPath("cargo")
	if err != nil {
		cargo = "/root/.cargo/bin/cargo"
		if _, err := os.Stat(cargo); err != nil {
			return "", "cargo not found"
		}
	}
	dir := t.TempDir()
	files := map[string]string{
		"Cargo.toml": "[package]\nname = \"agree\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[profile.dev]\ndebug = 2\n",
		"src/main.rs": `#[repr(C)] pub struct Pair { pub a: u8, pub b: u64, pub c: [u16; 3] }
pub struct Plain { pub name: String, pub items: Vec<u32>, pub opt: Option<Box<Pair>>, pub tag: char }
#[repr(C)] pub union Either { pub i: i32, pub f: f32 }
pub enum Shape { Circle(f64), Rect { w: u32, h: u32 }, Empty }
fn main() {
    let p = Plain { name: String::from("x"), items: vec![1, 2], opt: Some(Box::new(Pair { a: 1, b: 2, c: [3; 3] })), tag: 'z' };
    let e = Either { i: 3 };
    let s = [Shape::Circle(1.0), Shape::Rect { w: 1, h: 2 }, Shape::Empty];
    println!("{} {} {} {}", p.name, p.items.len(), unsafe { e.i }, s.len());
}
`,
	}
	for name, body := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			return "", err.Error()
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return "", err.Error()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cargo, "build", "--offline", "--quiet")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CARGO_TARGET_DIR="+filepath.Join(dir, "target"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Sprintf("cargo build --offline: %v: %s", err, out)
	}
	return filepath.Join(dir, "target", "debug", "agree"), ""
}

// goBinary builds a small Go program with DWARF (the default).
func goBinary(t *testing.T) (string, string) {
	src := "package main\n\nimport (\"fmt\"; \"os\")\n\ntype pair struct { a uint8; b uint64; c [3]uint16; s string; m map[string]int; f func(int) error }\n\nfunc main() { p := pair{a: 1}; fmt.Fprintln(os.Stdout, p.a, len(p.s)) }\n"
	bin, err := testbin.Program(t.TempDir(), "agree", src)
	if err != nil {
		return "", err.Error()
	}
	return bin, ""
}
