package main

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/runtime/builder"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// The distribution inputs, as a user names them.
const (
	libcPath  = "/lib/x86_64-linux-gnu/libc.so.6"
	libstdcxx = "/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30"
	// absentName is a struct no input declares: every tool reads all of
	// the DWARF before it can say so.
	absentName = "nrtabi_absent_t"
)

// requirements lists what the bench needs and is missing, with the command
// that installs it. `make test` needs none of these.
func requirements(quick bool) []string {
	var missing []string
	if err := cc.Available(); err != nil {
		missing = append(missing, fmt.Sprintf("%v: apt-get install gcc", err))
	}
	if _, err := os.Stat(filepath.Join("generated", spec.Default, "c", gen.HeaderName)); err != nil {
		missing = append(missing, "generated/"+spec.Default+"/c/"+gen.HeaderName+" absent: run from the repository root")
	}
	if quick {
		// The quick mode builds its inputs and runs without the peers
		// (their rows say that they are not installed).
		if _, err := exec.LookPath("go"); err != nil {
			missing = append(missing, "go not on PATH")
		}
		return missing
	}
	for _, t := range []struct{ bin, pkg string }{{"pahole", "dwarves"}, {"go", "golang (on PATH)"}, {"dwz", "dwz"}, {"g++", "g++ (the generated C++ object)"}} {
		if _, err := exec.LookPath(t.bin); err != nil {
			missing = append(missing, fmt.Sprintf("%s not on PATH: apt-get install %s", t.bin, t.pkg))
		}
	}
	if dbg, err := buildIDPath(libcPath); err != nil {
		missing = append(missing, fmt.Sprintf("%s: %v", libcPath, err))
	} else if _, err := os.Stat(dbg); err != nil {
		missing = append(missing, fmt.Sprintf("%s (libc's debug file by build-id) absent: apt-get install libc6-dbg", dbg))
	}
	if _, err := os.Stat(libstdcxx); err != nil {
		missing = append(missing, fmt.Sprintf("%s absent: apt-get install libstdc++6-12-dbg", libstdcxx))
	}
	return missing
}

// buildIDPath is where the build-id tree keeps path's debug file.
func buildIDPath(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	for _, s := range f.Sections {
		if s.Name != ".note.gnu.build-id" {
			continue
		}
		b, err := s.Data()
		if err != nil || len(b) < 16 {
			break
		}
		id := b[16:]
		return fmt.Sprintf("/usr/lib/debug/.build-id/%x/%x.debug", id[:1], id[1:]), nil
	}
	return "", fmt.Errorf("has no build-id note")
}

// row is one input and one set of structs asked of every tool.
type row struct {
	label  string
	file   string   // the path every tool is given
	dwarf  string   // the file holding its DWARF (for the size column)
	asked  []string // the structs, as nrtabi names them
	pahole []string // the same structs, as pahole -C names them
	spec   string   // --spec DIR for show and check; "" = the embedded release
	role   string   // check --role
	absent bool     // no input declares them: every tool must say so
	// extra is what check compares beyond the asked structs (the fragment's
	// dependent structs), for the table's notes.
	extra int
	// noAnswer: pahole has no answer for this input (a dwz supplement or a
	// .dwo it does not follow); its own message. It is still run and timed,
	// and must still say "not found".
	noAnswer string
}

var typedefLine = lineCounter{regexp.MustCompile(`(?m)^typedef [^{]*;$`)}

type lineCounter struct{ re *regexp.Regexp }

func (l lineCounter) Count(b []byte) int { return len(l.re.FindAllIndex(b, -1)) }

// okLine is a struct check found and graded: OK, or COMPATIBLE (a
// fragment's round trip can grade a pointer's spelled target as a
// compatible change; the struct was still found and compared, which is the
// work timed).
var okLine = regexp.MustCompile(`(?m)^\s+(?:OK|COMPATIBLE)\s+(\S+)\s`)

func (r row) tools(nrtabi, pahole string) []tool {
	specArgs := []string{"--spec", spec.Default}
	if r.spec != "" {
		specArgs = []string{"--spec", r.spec}
	}
	show := tool{name: "nrtabi show", args: []string{"one struct per run"}}
	if len(r.asked) == 1 {
		show = tool{name: "nrtabi show", bin: nrtabi, args: append([]string{"show", r.asked[0], r.file}, specArgs...), ok: func(s sample) error {
			if r.absent {
				if s.code != 1 || !bytes.Contains(s.errOut, []byte("no struct")) {
					return fmt.Errorf("exit %d: want exit 1 and \"no struct\"", s.code)
				}
				return nil
			}
			if s.code&^12 != 0 || !bytes.Contains(s.out, []byte("/* size: ")) {
				return fmt.Errorf("exit %d, no layout printed", s.code)
			}
			return nil
		}}
	}
	check := tool{name: "nrtabi check", bin: nrtabi,
		args: append(append([]string{"check", "--role", r.role, "--require", strings.Join(r.asked, ",")}, specArgs...), r.file),
		ok: func(s sample) error {
			if r.absent {
				if s.code != 8 || !bytes.Contains(s.out, []byte("required struct not found")) {
					return fmt.Errorf("exit %d: want exit 8 and a missing required struct", s.code)
				}
				return nil
			}
			if s.code != 0 && s.code != 4 {
				return fmt.Errorf("exit %d, want a clean check (or compatible changes only, exit 4)", s.code)
			}
			seen := map[string]bool{}
			for _, m := range okLine.FindAllSubmatch(s.out, -1) {
				seen[string(m[1])] = true
			}
			for _, n := range r.asked {
				if !seen[n] {
					return fmt.Errorf("%s not reported OK", n)
				}
			}
			return nil
		}}
	names := strings.Join(r.pahole, ",")
	if strings.ContainsAny(names, "<") {
		names = "file://" + r.paholeList()
	}
	ph := tool{name: "pahole -C", bin: pahole, args: []string{"-C", names, r.file}, ok: func(s sample) error {
		if r.noAnswer != "" {
			if !bytes.Contains(s.errOut, []byte("not found")) {
				return fmt.Errorf("exit %d: pahole now answers on this input; drop the row's noAnswer", s.code)
			}
			return nil
		}
		if r.absent {
			if !bytes.Contains(s.errOut, []byte("not found")) {
				return fmt.Errorf("exit %d, no \"not found\"", s.code)
			}
			return nil
		}
		// pahole 1.24 prints only "typedef union pthread_mutex_t;" for a
		// typedef of an anonymous union: that is its answer, and it counts.
		if n := bytes.Count(s.out, []byte("/* size: ")) + typedefLine.Count(s.out); n < len(r.asked) {
			return fmt.Errorf("printed %d layouts, want %d", n, len(r.asked))
		}
		return nil
	}}
	if pahole == "" {
		// Not installed (the quick mode runs without it): the row stays,
		// with the reason in place of pahole's numbers.
		ph = tool{name: "pahole -C", args: []string{"pahole not installed (apt-get install dwarves)"}}
	}
	return []tool{show, check, ph}
}

// paholeList writes the names for pahole -C file:// (pahole splits a -C
// list at commas, which C++ template names contain).
func (r row) paholeList() string {
	p := filepath.Join(os.TempDir(), fmt.Sprintf("nrtabi-bench-pahole-%x.txt", len(strings.Join(r.pahole, "\n"))))
	_ = os.WriteFile(p, []byte(strings.Join(r.pahole, "\n")+"\n"), 0o644)
	return p
}

// buildRows prepares every input (extracting spec fragments, building the
// synthetic, DWARF 4 and reference objects once into cache) and lists the
// rows in table order.
func buildRows(cache, nrtabi string) ([]row, error) {
	libcDebug, err := buildIDPath(libcPath)
	if err != nil {
		return nil, err
	}
	frags := filepath.Join(cache, "fragments")
	var rows []row
	// libc through the build-id tree.
	for _, st := range []struct{ asked, pahole string }{{"pthread_mutex_t", "pthread_mutex_t"}, {"_IO_FILE", "_IO_FILE"}, {"stat", "stat"}} {
		dir, n, err := fragment(nrtabi, frags, "libc-"+st.asked, libcPath, st.asked)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row{label: "libc.so.6 → libc6-dbg (build-id)", file: libcPath, dwarf: libcDebug,
			asked: []string{st.asked}, pahole: []string{st.pahole}, spec: dir, role: "none", extra: n - 1})
	}
	absent, err := absentFragment(nrtabi, frags)
	if err != nil {
		return nil, err
	}
	rows = append(rows, row{label: "libc.so.6 → libc6-dbg (build-id)", file: libcPath, dwarf: libcDebug,
		asked: []string{absentName}, pahole: []string{absentName}, spec: absent, role: "none", absent: true})

	// libstdc++ (C++).
	for _, st := range []struct{ asked, pahole string }{{"_IO_FILE", "_IO_FILE"},
		{"std::basic_ostringstream<char>", "basic_ostringstream<char, std::char_traits<char>, std::allocator<char> >"}} {
		dir, n, err := fragment(nrtabi, frags, "libstdcxx-"+strings.NewReplacer(":", "_", "<", "_", ">", "_").Replace(st.asked), libstdcxx, st.asked)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row{label: "libstdc++.so.6.0.30 (libstdc++6-12-dbg)", file: libstdcxx, dwarf: libstdcxx,
			asked: []string{st.asked}, pahole: []string{st.pahole}, spec: dir, role: "none", extra: n - 1})
	}
	rows = append(rows, row{label: "libstdc++.so.6.0.30 (libstdc++6-12-dbg)", file: libstdcxx, dwarf: libstdcxx,
		asked: []string{absentName}, pahole: []string{absentName}, spec: absent, role: "none", absent: true})

	sp, err := compiled.Load(spec.Default)
	if err != nil {
		return nil, err
	}
	// Objects built here: the synthetic one, a DWARF 4 one, the reference
	// libnrt.so.1 and libnccom double.
	syn, err := synthetic(cache, fullSyn)
	if err != nil {
		return nil, err
	}
	dw4, err := dwarf4Object(cache)
	if err != nil {
		return nil, err
	}
	lib, stub, err := referenceBuild(cache)
	if err != nil {
		return nil, err
	}
	for _, in := range []struct {
		label, file, role string
		one               bool // also a one-struct row
	}{
		{fmt.Sprintf("synthetic (%d structs, spec unit last)", fullSyn.units*fullSyn.structs), syn, "none", true},
		{"DWARF 4 object (-gdwarf-4, libc headers + the spec header)", dw4, "none", true},
		{"reference libnrt.so.1 (Go c-shared, nrtabi-runtime build libnrt)", lib, "auto", false},
		{"libnccom double (good, nrtabi-runtime build nccom-stubs)", stub, "auto", false},
	} {
		found, err := foundStructs(nrtabi, in.file)
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: nrtabi check finds no spec struct in it", in.file)
		}
		// pahole -C stops at the first name of its list that it does not
		// find, so the present ones go first; it still reads everything.
		var tags, absentTags []string
		present := map[string]bool{}
		for _, n := range found {
			present[n] = true
		}
		for _, st := range sp.Structs {
			if present[st.Name] {
				tags = append(tags, st.CTag())
			} else {
				absentTags = append(absentTags, st.CTag())
			}
		}
		tags = append(tags, absentTags...)
		label := fmt.Sprintf("%s — the %d structs of %s (%d present)", in.label, len(sp.Structs), spec.Default, len(found))
		rows = append(rows, row{label: label, file: in.file, dwarf: in.file, asked: found, pahole: tags, role: in.role})
		if in.one {
			const one = "nec_version_info_t"
			rows = append(rows, row{label: in.label, file: in.file, dwarf: in.file, asked: []string{one},
				pahole: []string{sp.StructByName(one).CTag()}, spec: mustFragment(nrtabi, frags, "one-"+filepath.Base(in.file), in.file, one), role: in.role})
			rows = append(rows, row{label: in.label, file: in.file, dwarf: in.file,
				asked: []string{absentName}, pahole: []string{absentName}, spec: absent, role: "none", absent: true})
		}
	}

	// dwz -m and -gsplit-dwarf: every spec struct, read from the
	// supplement or the .dwo.
	dwzLib, common, err := dwzInput(cache)
	if err != nil {
		return nil, err
	}
	splitLib, dwo, err := splitInput(cache)
	if err != nil {
		return nil, err
	}
	for _, in := range []struct{ label, file, dwarf string }{
		{"dwz -m library (types in its supplementary file)", dwzLib, common},
		{"-gsplit-dwarf library (DWARF 5; types in its .dwo)", splitLib, dwo},
	} {
		found, err := foundStructs(nrtabi, in.file)
		if err != nil {
			return nil, err
		}
		if len(found) != len(sp.Structs) {
			return nil, fmt.Errorf("%s: nrtabi check finds %d of the %d spec structs", in.file, len(found), len(sp.Structs))
		}
		var tags []string
		for _, st := range sp.Structs {
			tags = append(tags, st.CTag())
		}
		const one = "nec_version_info_t"
		tag := sp.StructByName(one).CTag()
		rows = append(rows, row{label: in.label, file: in.file, dwarf: in.dwarf, asked: []string{one}, pahole: []string{tag},
			spec: mustFragment(nrtabi, frags, "one-"+filepath.Base(filepath.Dir(in.file)), in.file, one), role: "none", noAnswer: paholeAnswer(in.file, tag)})
		rows = append(rows, row{label: fmt.Sprintf("%s — the %d structs of %s", in.label, len(sp.Structs), spec.Default), file: in.file, dwarf: in.dwarf,
			asked: found, pahole: tags, role: "none", noAnswer: paholeAnswer(in.file, tags[0])})
	}
	return rows, nil
}

// fragment extracts a spec fragment of one struct (and the structs its
// members name, which extract writes so the fragment loads); n counts them.
func fragment(nrtabi, root, name, file, st string) (dir string, n int, err error) {
	dir = filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, err
	}
	out := filepath.Join(dir, "structs.toml")
	if b, err := exec.Command(nrtabi, "extract", "--struct", st, "-o", out, file).CombinedOutput(); err != nil {
		return "", 0, fmt.Errorf("nrtabi extract --struct %s %s: %w\n%s", st, file, err, b)
	}
	text, err := os.ReadFile(out)
	if err != nil {
		return "", 0, err
	}
	return dir, bytes.Count(text, []byte("\n[[struct]]")), nil
}

func mustFragment(nrtabi, root, name, file, st string) string {
	dir, _, err := fragment(nrtabi, root, name, file, st)
	if err != nil {
		slog.Error("fragment", "err", err)
		os.Exit(1)
	}
	return dir
}

// absentFragment is a fragment of one struct that no input declares: the
// tiny object's struct renamed.
func absentFragment(nrtabi, root string) (string, error) {
	tiny, err := tinyObject(filepath.Dir(root))
	if err != nil {
		return "", err
	}
	dir, _, err := fragment(nrtabi, root, "absent", tiny, "nec_version_info_t")
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "structs.toml")
	text, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	text = bytes.ReplaceAll(text, []byte(`name = "nec_version_info_t"`), []byte(`name = "`+absentName+`"`))
	if !bytes.Contains(text, []byte(absentName)) {
		return "", fmt.Errorf("%s: no struct to rename", p)
	}
	return dir, os.WriteFile(p, text, 0o644)
}

// foundStructs asks nrtabi check (untimed) which spec structs the file has.
func foundStructs(nrtabi, file string) ([]string, error) {
	out, err := exec.Command(nrtabi, "check", "--role", "none", "--format", "json", file).Output()
	if err != nil && len(out) == 0 {
		return nil, fmt.Errorf("nrtabi check %s: %w", file, err)
	}
	var rep struct {
		Files []struct {
			Structs []struct{ Name string } `json:"structs"`
		} `json:"files"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return nil, fmt.Errorf("nrtabi check --format json %s: %w", file, err)
	}
	var names []string
	for _, f := range rep.Files {
		for _, s := range f.Structs {
			names = append(names, s.Name)
		}
	}
	return names, nil
}

// dwarf4Object compiles libc's stdio, pthread and stat headers with the
// spec's generated header into a shared object with DWARF 4 (once).
func dwarf4Object(cache string) (string, error) {
	header, err := filepath.Abs(filepath.Join("generated", spec.Default, "c", gen.HeaderName))
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "dwarf4")
	out := filepath.Join(dir, "libdwarf4.so")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src := filepath.Join(dir, "dwarf4.c")
	text := "#define _GNU_SOURCE\n#include <stdio.h>\n#include <pthread.h>\n#include <sys/stat.h>\n#include \"" + header + "\"\n"
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		return "", err
	}
	if err := cc.Run("", "-shared", "-fPIC", "-g", "-gdwarf-4", "-fno-eliminate-unused-debug-types", "-o", out, src); err != nil {
		return "", fmt.Errorf("the DWARF 4 input: %w", err)
	}
	return out, nil
}

// referenceBuild builds libnrt.so.1 and the good libnccom double the way
// `make libnrt` and `make nccom-stubs` do (once; delete the cache to rebuild).
func referenceBuild(cache string) (lib, stub string, err error) {
	dir := filepath.Join(cache, "reference")
	lib = filepath.Join(dir, "lib", "libnrt.so.1")
	stub = filepath.Join(dir, "stubs", builder.StubGood, "libnccom.so")
	if _, err := os.Stat(stub); err == nil {
		return lib, stub, nil
	}
	slog.Info("building the reference libnrt.so.1 and libnccom double (once)", "dir", dir)
	tree, err := builder.Open(spec.Default)
	if err != nil {
		return "", "", err
	}
	if lib, err = tree.BuildLibnrt(context.Background(), filepath.Join(dir, "lib"), builder.Versioned); err != nil {
		return "", "", err
	}
	good, err := tree.StubByName(builder.StubGood)
	if err != nil {
		return "", "", err
	}
	if stub, err = tree.BuildStub(context.Background(), filepath.Join(dir, "lib"), filepath.Join(dir, "stubs"), good); err != nil {
		return "", "", err
	}
	return lib, stub, nil
}
