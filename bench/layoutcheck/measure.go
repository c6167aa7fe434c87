package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// tool is one command of a show/check row and how to tell that it did the
// job (a run that did not find the structs it was asked for times nothing).
type tool struct {
	name string
	bin  string
	args []string
	ok   func(s sample) error
}

type result struct {
	row   row
	stats []stat // show, check, pahole, the empty Go program
}

// measureRow runs the row's tools and an empty Go program interleaved: run
// i starts with tool i mod 4, so no tool always runs first on a warm or a
// cold cache. The input is read through first (the page cache warm for
// every tool) and every run is judged.
func measureRow(ctx context.Context, runs int, nrtabi, pahole, empty string, r row) (result, error) {
	slog.Info("measuring", "row", r.label, "runs", runs)
	tools := append(r.tools(nrtabi, pahole), tool{name: "empty Go program", bin: empty, ok: func(s sample) error {
		if s.code != 0 {
			return fmt.Errorf("exit %d", s.code)
		}
		return nil
	}})
	for _, f := range []string{r.file, r.dwarf} {
		if err := readThrough(f); err != nil {
			return result{}, err
		}
	}
	n := len(tools)
	walls := make([][]time.Duration, n)
	stats := make([]stat, n)
	for i := range runs {
		for k := range n {
			idx := (i + k) % n
			t := tools[idx]
			if t.bin == "" {
				continue
			}
			s, err := runProc(ctx, runSpec{bin: t.bin, args: t.args})
			if err != nil {
				return result{}, err
			}
			if err := t.ok(s); err != nil {
				return result{}, fmt.Errorf("%s: %s %s: %w\nstdout:\n%s\nstderr:\n%s", r.label, t.name, strings.Join(t.args, " "), err, clip(s.out), clip(s.errOut))
			}
			walls[idx] = append(walls[idx], s.wall)
			stats[idx].maxRSS = max(stats[idx].maxRSS, s.maxRSS)
			stats[idx].floor = max(stats[idx].floor, s.floor)
			stats[idx].runs++
		}
	}
	res := result{row: r}
	for k, t := range tools {
		if t.bin == "" {
			res.stats = append(res.stats, stat{na: strings.Join(t.args, " ")})
			continue
		}
		st := stats[k]
		st.wall = median(walls[k])
		res.stats = append(res.stats, st)
	}
	return res, nil
}

// buildEmptyGo builds `func main() {}` (once): the Go runtime's own start,
// which the start-up row and every show/check row measure beside nrtabi.
func buildEmptyGo(cache string) (string, error) {
	empty := filepath.Join(cache, "goempty")
	src := filepath.Join(cache, "goempty-src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module goempty\n\ngo 1.22\n"), 0o644); err != nil {
		return "", err
	}
	cmd := exec.Command("go", "build", "-o", empty, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build of an empty program: %w\n%s", err, out)
	}
	return empty, rewritten(empty)
}

// rewritten replaces a binary the linker just wrote with a copy of itself
// written by write(2). The linker writes its output through a memory map,
// and go build renames that file into place; each start of it cost about
// 0.4 ms more system time (nrtabi, 21 MB) than a copy of the same bytes
// (docs/benchmarks.md#start-up-2026-12-04), so a timing of the fresh build
// would measure how its file was written, not the program.
func rewritten(bin string) error {
	data, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	tmp := bin + ".copy"
	if err := os.WriteFile(tmp, data, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, bin)
}

// tinyObject compiles one struct with gcc -g (once).
func tinyObject(cache string) (string, error) {
	dir := filepath.Join(cache, "tiny")
	obj := filepath.Join(dir, "tiny.o")
	if _, err := os.Stat(obj); err == nil {
		return obj, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src := filepath.Join(dir, "tiny.c")
	text := "#include <stdint.h>\ntypedef struct nec_version_info { uint64_t major, minor, patch, maintenance; char git_hash[16]; uint64_t compatibility_version; uint8_t future_fields[]; } nec_version_info_t;\nnec_version_info_t v;\n"
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		return "", err
	}
	if err := cc.Run("", "-c", "-g", "-o", obj, src); err != nil {
		return "", fmt.Errorf("tiny.c: %w", err)
	}
	return obj, nil
}
