package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// The throughput rows (issue 28): a directory of many binaries checked in
// one run, and whole libraries extracted, against pahole and abidw doing
// the same per file or per library. docs/benchmarks.md#throughput says what
// each row is and why.

// bigTool is one command of a throughput row.
type bigTool struct {
	name  string // as printed
	bin   string // "" when it cannot run; na says why
	args  []string
	cores int    // the cores it is told to use (-j, xargs -P): MiB/s per core divides by it
	na    string // why it has no number (a peer not installed)
	// ok judges the untimed warm-up run, whose standard output is kept in
	// out (a file: a whole library's output can be hundreds of MiB); the
	// timed runs write to /dev/null and must exit as the warm-up did. A
	// note is printed beside the tool's numbers.
	ok func(s sample, out string) (note string, err error)
}

// bigRow is one input of the throughput table and the tools run on it.
type bigRow struct {
	label     string
	kind      string // "directory" or "whole library"
	debugInfo uint64 // bytes of .debug_info (uncompressed) in all its files
	files     int
	tools     []bigTool
}

// bigResult is a row's stats and notes, in its tools' order.
type bigResult struct {
	row   bigRow
	stats []stat
	notes []string
	// outSum is each tool's warm-up output hash (extract -j 1 and -j 2 must
	// agree byte for byte).
	outSum [][32]byte
}

// measureBig runs a row's tools interleaved (run i starts with tool
// i mod n, so nrtabi and its peers alternate and none always meets a cold
// or a warm cache), one untimed warm-up run each first, which is also the
// run whose output is judged.
//
// A tool whose judged run took longer than slow (abidw on a 60 MiB C++
// object: minutes and 11 GiB) is timed from that run alone, and its note
// says so: five more would outlast the bench, and a run of minutes varies
// far less than the ratios the goals judge. slow 0 times every tool runs
// times.
func measureBig(runs int, slow time.Duration, cache string, r bigRow) (bigResult, error) {
	slog.Info("measuring", "row", r.label, "runs", runs)
	n := len(r.tools)
	res := bigResult{row: r, stats: make([]stat, n), notes: make([]string, n), outSum: make([][32]byte, n)}
	walls := make([][]time.Duration, n)
	cpus := make([][]time.Duration, n)
	rss := make([]int64, n)
	codes := make([]int, n)
	failed := make([]string, n)
	once := make([]bool, n) // timed from its judged run alone (slow)
	for i := -1; i < runs; i++ {
		for k := range n {
			idx := (max(i, 0) + k) % n
			t := r.tools[idx]
			if t.bin == "" || failed[idx] != "" {
				continue
			}
			if i < 0 {
				s, sum, note, err := warmUp(cache, t)
				if err != nil {
					// Kept in the table as a failure, not dropped, and not
					// timed: no time is reported for work not done.
					failed[idx] = err.Error()
					if first, _, _ := strings.Cut(strings.TrimSpace(string(s.errOut)), "\n"); first != "" {
						failed[idx] += ": " + first
					}
					slog.Warn("failed; its row stays, marked", "row", r.label, "tool", t.name, "args", strings.Join(t.args, " "), "err", err)
					continue
				}
				codes[idx], res.notes[idx], res.outSum[idx] = s.code, note, sum
				if slow > 0 && s.wall > slow {
					walls[idx], cpus[idx], rss[idx], once[idx] = []time.Duration{s.wall}, []time.Duration{s.cpu}, s.maxRSS, true
					res.notes[idx] = strings.TrimPrefix(res.notes[idx]+"; ", "; ") + fmt.Sprintf("one run (the judged one; it took %.0f s, over -slow %s)", s.wall.Seconds(), slow)
				}
				continue
			}
			if once[idx] {
				continue
			}
			s, err := runTo(t.bin, t.args, true)
			if err != nil {
				return res, err
			}
			if s.code != codes[idx] {
				return res, fmt.Errorf("%s: %s %s: exit %d, but %d in the judged warm-up run\nstderr:\n%s", r.label, t.name, strings.Join(t.args, " "), s.code, codes[idx], clip(s.errOut))
			}
			walls[idx] = append(walls[idx], s.wall)
			cpus[idx] = append(cpus[idx], s.cpu)
			rss[idx] = max(rss[idx], s.maxRSS)
		}
	}
	for k, t := range r.tools {
		if t.bin == "" {
			res.stats[k] = stat{na: t.na}
			continue
		}
		if failed[k] != "" {
			first, _, _ := strings.Cut(failed[k], "\n")
			res.stats[k] = stat{na: "FAILED: " + first, failed: true}
			continue
		}
		res.stats[k] = stat{wall: median(walls[k]), cpu: median(cpus[k]), maxRSS: rss[k]}
	}
	return res, nil
}

// warmUp runs t once with its output kept in a file under cache, judges it
// and returns the output's hash.
func warmUp(cache string, t bigTool) (sample, [32]byte, string, error) {
	var sum [32]byte
	f, err := os.CreateTemp(cache, "warmup-*.out")
	if err != nil {
		return sample{}, sum, "", err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	s, err := runFile(t.bin, t.args, f)
	if err != nil {
		return s, sum, "", err
	}
	note, err := t.ok(s, f.Name())
	if err != nil {
		return s, sum, "", err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return s, sum, "", err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return s, sum, "", err
	}
	copy(sum[:], h.Sum(nil))
	return s, sum, note, nil
}

// countIn counts the lines of the file at path that start with prefix, and
// reports whether any line contains sub.
func countIn(path, prefix, sub string) (n int, has bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		if prefix != "" && bytes.HasPrefix(sc.Bytes(), []byte(prefix)) {
			n++
		}
		if sub != "" && !has && bytes.Contains(sc.Bytes(), []byte(sub)) {
			has = true
		}
	}
	return n, has, sc.Err()
}

// peer finds a peer tool on PATH; when it is not there the tool stays in
// the row with the reason printed in place of its numbers.
func peer(name, pkg string) (bin, na string) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Sprintf("%s not installed (apt-get install %s)", name, pkg)
	}
	return p, ""
}

// extractTools are nrtabi extract --all at -j 2 and -j 1. Both must write
// the same bytes (the merge is deterministic whatever -j, issue 28 item 3).
func extractTools(nrtabi, file string) []bigTool {
	ok := func(s sample, out string) (string, error) {
		if s.code != 0 && s.code != 1 {
			return "", fmt.Errorf("exit %d, want 0 or 1 (some structs refused)", s.code)
		}
		n, _, err := countIn(out, "[[struct]]", "")
		if err != nil {
			return "", err
		}
		if n == 0 {
			return "", fmt.Errorf("exit %d and no [[struct]] written", s.code)
		}
		note := fmt.Sprintf("%d structs written", n)
		if s.code == 1 {
			note += " (some refused by name, exit 1)"
		}
		return note, nil
	}
	return []bigTool{
		{name: "nrtabi extract --all -j 2", bin: nrtabi, args: []string{"extract", "--all", "-j", "2", file}, cores: 2, ok: ok},
		{name: "nrtabi extract --all -j 1", bin: nrtabi, args: []string{"extract", "--all", "-j", "1", file}, cores: 1, ok: ok},
	}
}

// wholeLibraryRow is extract --all against pahole (all structs, -j2) and
// abidw on one file, interleaved nrtabi, peer, nrtabi, peer.
func wholeLibraryRow(label, nrtabi, file string) (bigRow, error) {
	size, err := debugInfoSize(file)
	if err != nil {
		return bigRow{}, err
	}
	ex := extractTools(nrtabi, file)
	pahole, paholeNA := peer("pahole", "dwarves")
	abidw, abidwNA := peer("abidw", "abigail-tools")
	// pahole 1.24 takes -j's count only attached (-j2): `-j 2 FILE` reads
	// "2" as a struct name and the kernel's BTF, not FILE.
	ph := bigTool{name: "pahole -j2 FILE >/dev/null", bin: pahole, na: paholeNA, args: []string{"-j2", file}, cores: 2,
		ok: func(s sample, out string) (string, error) {
			if s.code != 0 {
				return "", fmt.Errorf("exit %d", s.code)
			}
			n, _, err := countIn(out, "struct ", "")
			if err != nil {
				return "", err
			}
			if n == 0 {
				return "", errors.New("printed no struct")
			}
			return fmt.Sprintf("%d structs printed", n), nil
		}}
	ab := bigTool{name: "abidw FILE >/dev/null", bin: abidw, na: abidwNA, args: []string{file}, cores: 1,
		ok: func(s sample, out string) (string, error) {
			if s.code != 0 {
				return "", fmt.Errorf("exit %d", s.code)
			}
			if _, has, err := countIn(out, "", "<abi-corpus"); err != nil || !has {
				return "", fmt.Errorf("no <abi-corpus> written (%v)", err)
			}
			return "", nil
		}}
	return bigRow{label: label, kind: "whole library", debugInfo: size, files: 1, tools: []bigTool{ex[0], ph, ex[1], ab}}, nil
}

// directoryRow is `nrtabi check --spec 2.31.24 -j 2 DIR` against pahole
// and abidw run once per file through `xargs -P 2`. pahole is asked the
// same question as check (the spec's structs, -C); abidw has no way to ask
// for some types and writes each file's whole ABI.
func directoryRow(label, cache, nrtabi string, files []string) (bigRow, error) {
	dir := filepath.Join(cache, "directory")
	if err := os.RemoveAll(dir); err != nil {
		return bigRow{}, err
	}
	var inDir []string
	var total uint64
	for _, f := range files {
		// Hard links (a copy across file systems): check walks regular files
		// and does not follow a symbolic link out of the tree.
		name := strings.NewReplacer("/", "_").Replace(strings.TrimPrefix(f, "/"))
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return bigRow{}, err
		}
		if err := os.Link(f, dst); err != nil {
			if err := copyFile(f, dst); err != nil {
				return bigRow{}, err
			}
		}
		size, err := debugInfoSize(dst)
		if err != nil {
			return bigRow{}, err
		}
		total += size
		inDir = append(inDir, dst)
	}
	sort.Strings(inDir)
	list := filepath.Join(cache, "directory.list")
	if err := os.WriteFile(list, []byte(strings.Join(inDir, "\n")+"\n"), 0o644); err != nil {
		return bigRow{}, err
	}
	sp, err := compiled.Load(spec.Default)
	if err != nil {
		return bigRow{}, err
	}
	var tags []string
	for _, st := range sp.Structs {
		tags = append(tags, st.CTag())
	}
	check := bigTool{name: "nrtabi check --spec " + spec.Default + " -j 2 DIR", bin: nrtabi,
		args: []string{"check", "--spec", spec.Default, "-j", "2", dir}, cores: 2,
		ok: func(s sample, out string) (string, error) {
			if s.code == 2 || s.code >= 64 {
				return "", fmt.Errorf("exit %d: a usage error or a crash", s.code)
			}
			text, err := os.ReadFile(out)
			if err != nil {
				return "", err
			}
			for _, f := range inDir {
				if !bytes.Contains(text, []byte(filepath.Base(f))) {
					return "", fmt.Errorf("the report does not name %s", f)
				}
			}
			return fmt.Sprintf("exit %d, every file in the report", s.code), nil
		}}
	xargs, xargsNA := peer("xargs", "findutils")
	pahole, paholeNA := peer("pahole", "dwarves")
	abidw, abidwNA := peer("abidw", "abigail-tools")
	ph := bigTool{name: "xargs -P 2 pahole -C SPEC-STRUCTS FILE", bin: xargs, na: xargsNA + paholeNA, cores: 2,
		args: []string{"-P", "2", "-n", "1", "-a", list, pahole, "-C", strings.Join(tags, ",")},
		ok: func(s sample, out string) (string, error) {
			// xargs exits 123 when some pahole exited 1-125: pahole -C says
			// "not found" that way, which is an answer.
			if (s.code != 0 && s.code != 123) || bytes.Contains(s.errOut, []byte("xargs:")) {
				return "", fmt.Errorf("exit %d", s.code)
			}
			return "", nil
		}}
	if pahole == "" {
		ph.bin = ""
	}
	ab := bigTool{name: "xargs -P 2 abidw FILE", bin: xargs, na: xargsNA + abidwNA, cores: 2,
		args: []string{"-P", "2", "-n", "1", "-a", list, abidw},
		ok: func(s sample, out string) (string, error) {
			if bytes.Contains(s.errOut, []byte("xargs:")) {
				return "", fmt.Errorf("exit %d", s.code)
			}
			n, _, err := countIn(out, "<abi-corpus ", "")
			if err != nil {
				return "", err
			}
			note := fmt.Sprintf("%d of %d files written", n, len(inDir))
			if s.code != 0 {
				first, _, _ := strings.Cut(strings.TrimSpace(string(s.errOut)), "\n")
				note += fmt.Sprintf(" (exit %d: %s)", s.code, first)
			}
			return note, nil
		}}
	if abidw == "" {
		ab.bin = ""
	}
	return bigRow{label: label, kind: "directory", debugInfo: total, files: len(inDir), tools: []bigTool{check, ph, ab}}, nil
}

// distributionFiles are the ELF files libc6-dbg installs under
// /usr/lib/debug and the ELF files libstdc++6-12-dbg installs (Debian 12's
// puts none under /usr/lib/debug: its debug build of libstdc++ is under
// /usr/lib/x86_64-linux-gnu/debug), symbolic links left out.
func distributionFiles() ([]string, error) {
	out, err := exec.Command("dpkg", "-L", "libc6-dbg", "libstdc++6-12-dbg").Output()
	if err != nil {
		return nil, fmt.Errorf("dpkg -L libc6-dbg libstdc++6-12-dbg (apt-get install libc6-dbg libstdc++6-12-dbg): %w", err)
	}
	var files []string
	for _, p := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(p, "/usr/lib/debug/") && !strings.HasPrefix(p, "/usr/lib/x86_64-linux-gnu/debug/") {
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || !isELF(p) {
			continue
		}
		files = append(files, p)
	}
	if len(files) == 0 {
		return nil, errors.New("libc6-dbg and libstdc++6-12-dbg install no ELF file (apt-get install libc6-dbg libstdc++6-12-dbg)")
	}
	return files, nil
}

func isELF(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && string(magic[:]) == elf.ELFMAG
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// debugInfoSize is the uncompressed size of path's .debug_info (0 when it
// has none: a stripped object in the directory still counts as a file).
func debugInfoSize(path string) (uint64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := f.Section(".debug_info")
	if s == nil {
		return 0, nil
	}
	return s.Size, nil
}
