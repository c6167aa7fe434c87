package addrelease

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/proc"
	"github.com/nrtabi/nrtabi/runtime/builder"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
	"github.com/nrtabi/nrtabi/spec"
)

// The release the loop adds, and its build tag (docs/generator.md#building-for-a-release).
const (
	release = "2.33.0-drop"
	tag     = "nrtabi_release_2_33_0_drop" // tagOf(release)
	// subdir is where the user stands: not the module root.
	subdir = "runtime/collectives"
	// treeFromSub is the header tree as the user names it from subdir.
	treeFromSub = "../e2e/addrelease/testdata/include"
	// loopLimit bounds the whole loop (58 s with a warm build cache, 197 s
	// cold, on a shared 2-core machine at load 10-20); each step is bounded
	// by what is left.
	loopLimit = 15 * time.Minute
	// worldRanks is the size of the boundary world run on the new release.
	worldRanks = 8
)

// loop is one run of the add-a-release loop in a copy of the module.
type loop struct {
	t     *testing.T
	ctx   context.Context
	mod   string // the copy of the module checkout
	bin   string // where the user's installed binaries go (outside the copy)
	goCmd string
	env   []string
	steps []timed
	start time.Time
}

type timed struct {
	name string
	took time.Duration
}

// run runs argv in dir (relative to the copy) and returns its exit status
// and everything it printed; a command that cannot start is fatal.
func (l *loop) run(dir string, argv ...string) (int, string, time.Duration) {
	l.t.Helper()
	cmd := proc.Command(l.ctx, argv[0], argv[1:]...)
	cmd.Dir = filepath.Join(l.mod, dir)
	cmd.Env = l.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && l.ctx.Err() == nil:
		return ee.ExitCode(), out.String(), took
	case err != nil:
		l.t.Fatalf("`%s` in %s: %v (the loop's time limit, or the command could not start)\n%s", strings.Join(argv, " "), orRoot(dir), proc.Err(l.ctx, err), tail(out.String()))
	}
	return 0, out.String(), took
}

// step runs one step of the loop that must succeed, timed and logged; a
// failure names the step, the command and the directory.
func (l *loop) step(name, dir string, argv ...string) string {
	l.t.Helper()
	code, out, took := l.run(dir, argv...)
	l.steps = append(l.steps, timed{name, took})
	l.t.Logf("step %d, %s: %.1f s", len(l.steps), name, took.Seconds())
	if code != 0 {
		l.t.Fatalf("step %d (%s) failed: `%s` in %s exited %d\n%s", len(l.steps), name, strings.Join(argv, " "), orRoot(dir), code, tail(out))
	}
	return out
}

// refused runs a build for a release that is not generated: it must fail,
// name the command that generates the release (in words, or in the
// undefined identifier a Go guard file can only give), and leave nothing
// behind.
func (l *loop) refused(name, dir string, argv ...string) {
	l.t.Helper()
	code, out, took := l.run(dir, argv...)
	l.steps = append(l.steps, timed{"refused: " + name, took})
	l.t.Logf("step %d, refusal, %s: exit %d in %.1f s", len(l.steps), name, code, took.Seconds())
	switch {
	case code == 0:
		l.t.Errorf("refusal (%s): `%s` in %s succeeded for %s, which is not generated: a silent fallback to another release\n%s", name, strings.Join(argv, " "), orRoot(dir), release, tail(out))
	case !strings.Contains(out, "make generate RELEASE="+release) && !strings.Contains(out, "gen --all") && !strings.Contains(out, "run_make_generate"):
		l.t.Errorf("refusal (%s): `%s` in %s failed (exit %d) without naming the command that generates %s (make generate RELEASE=%s):\n%s", name, strings.Join(argv, " "), orRoot(dir), code, release, release, tail(out))
	}
}

func orRoot(dir string) string {
	if dir == "" {
		return "the module root"
	}
	return dir
}

// tail is the end of a long output, where a build says why it failed.
func tail(s string) string {
	const max = 6000
	if len(s) > max {
		return "...\n" + s[len(s)-max:]
	}
	return s
}

// TestAddRelease runs docs/adding-a-release.md as a user would: in a copy of the module checkout
// (a git repository of its own), a user standing in a subdirectory runs the
// installed `nrtabi release new` on a vendor-style header tree with planted
// drift; before the release is generated, building for it is refused by
// make, nrtabi-runtime build and go build -tags; then the steps release new
// printed run as printed: make generate, make libnrt libnccom, an 8-rank
// boundary world through ld.so on the two libraries (between those steps),
// nrtabi check of both against the new release (CLEAN) and the demo on it.
// No file is edited by hand, and git status shows nothing outside
// spec/NAME and the generated trees. Each step's wall time and the loop's
// are logged; a failure names its step.
func TestAddRelease(t *testing.T) {
	for _, tool := range []string{"git", "make", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping the add-a-release loop: %s is not installed (%v)", tool, err)
		}
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("skipping the add-a-release loop: no go command in PATH (%v)", err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := builder.FindRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	// Within go test's own -timeout, so that a slow step fails by name
	// instead of as the test binary's panic.
	limit := loopLimit
	if d, ok := t.Deadline(); ok && time.Until(d)-30*time.Second < limit {
		limit = time.Until(d) - 30*time.Second
	}
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	tmp := t.TempDir()
	l := &loop{t: t, ctx: ctx, mod: filepath.Join(tmp, "nrtabi"), bin: filepath.Join(tmp, "bin"), goCmd: goCmd, start: time.Now()}

	// One Go build cache with the outer test, so the copy's dependencies
	// are not compiled again; -trimpath keeps the copy's temporary path out
	// of the cache keys, so its own packages are not compiled again on the
	// next run either.
	cache, err := exec.CommandContext(ctx, goCmd, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOCACHE: %v", err)
	}
	l.env = append(os.Environ(), "PATH="+l.bin+string(os.PathListSeparator)+os.Getenv("PATH"), "GOCACHE="+strings.TrimSpace(string(cache)), "GOTOOLCHAIN=local", "GO="+goCmd, "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -trimpath"), "CGO_ENABLED=1",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=nrtabi test", "GIT_AUTHOR_EMAIL=test@nrtabi.invalid",
		"GIT_COMMITTER_NAME=nrtabi test", "GIT_COMMITTER_EMAIL=test@nrtabi.invalid", "MAKEFLAGS=", "NRTABI_LOG_LEVEL=warn")

	start := time.Now()
	n, err := copyCheckout(ctx, root, l.mod)
	if err != nil {
		t.Fatalf("step 0 (copy the module checkout): %v", err)
	}
	for _, argv := range [][]string{{"git", "init", "-q"}, {"git", "add", "-A"}, {"git", "commit", "-q", "-m", "the checkout before the release"}} {
		if code, out, _ := l.run("", argv...); code != 0 {
			t.Fatalf("step 0 (copy the module checkout): `%s` exited %d\n%s", strings.Join(argv, " "), code, tail(out))
		}
	}
	l.steps = append(l.steps, timed{fmt.Sprintf("copy %d files, git init and commit", n), time.Since(start)})
	t.Logf("step 1, %s: %.1f s", l.steps[0].name, l.steps[0].took.Seconds())

	nrtabi := filepath.Join(l.bin, "nrtabi")
	l.step("install nrtabi (go build ./cmd/nrtabi)", "", goCmd, "build", "-o", nrtabi, "./cmd/nrtabi")

	// release new, from a subdirectory, with the installed binary.
	out := l.step("nrtabi release new --headers (from "+subdir+")", subdir, nrtabi, "release", "new", "--name", release, "--headers", treeFromSub)
	specDir := filepath.Join(l.mod, "spec", release)
	if _, err := os.Stat(filepath.Join(specDir, "release.toml")); err != nil {
		t.Fatalf("release new from %s did not write spec/%s at the module root: %v\n%s", subdir, release, err, tail(out))
	}
	if _, err := os.Stat(filepath.Join(l.mod, subdir, "spec")); err == nil {
		t.Errorf("release new from %s wrote %s/spec as well", subdir, subdir)
	}
	warn := "warning: " + treeFromSub + "/nrt/nrt_async_ndl.h: does not compile on its own (declares no spec struct), left out; nrt/nrt_async_ndl.h:8:10: fatal error: ndl/neuron_driver_shared.h: No such file or directory"
	if !strings.Contains(out, warn) {
		t.Errorf("release new: its output lacks the warning for the planted broken header %q:\n%s", warn, tail(out))
	}
	// Each planted drift is a line of the diff it prints (the columns'
	// widths are diff's business: a line holding every word).
	for _, want := range [][]string{
		{"field-renamed", "enc_glb_comm.reservation_id", "reservation_id -> pod_id"},
		{"enc_glb_comm.pod_sz", "u32", "u64"},
		{"struct-size", "enc_glb_comm", "564408 -> 564360"},
		{"field-added", "enc_glb_comm.pod_leader", "bool @65"},
		{"enumerator-shifted", "nec_pod_type_t.NEC_POD_TYPE_SWITCH", "2 -> 3"},
	} {
		if !hasLine(out, want...) {
			t.Errorf("release new: its diff has no line with the planted %q:\n%s", want, tail(out))
		}
	}
	// Its "next" lines are the rest of the loop, run as printed (a shell
	// line, from the directory its "cd" line names, with the installed
	// nrtabi first in PATH); a step it does not print is an error, and the
	// loop goes on with the documented command (docs/adding-a-release.md).
	next := l.nextSteps(out)

	// Not generated yet: every way of building for it is refused.
	l.refused("make libnrt before make generate", "", "make", "libnrt", "RELEASE="+release)
	l.refused("nrtabi-runtime build libnrt before make generate", "", goCmd, "run", "-tags", tagOf(spec.Default), "./cmd/nrtabi-runtime", "build", "libnrt", "--spec", release, "--out", filepath.Join(tmp, "refused"))
	l.refused("go build -tags "+tag+" before make generate", "", goCmd, "build", "-tags", tag, "./...")
	for _, p := range []string{filepath.Join(l.mod, "build", builder.LibnrtFile), filepath.Join(tmp, "refused", builder.LibnrtFile)} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("a refused build left %s behind", p)
		}
	}

	l.step(next.generate+" (as printed)", next.dir, "sh", "-c", next.generate)
	l.step(next.build+" (as printed)", next.dir, "sh", "-c", next.build)
	build := filepath.Join(l.mod, "build")
	for _, f := range []string{builder.LibnrtFile, builder.LibnccomFile} {
		if _, err := os.Stat(filepath.Join(build, f)); err != nil {
			t.Fatalf("step %d (%s): %v", len(l.steps), next.build, err)
		}
	}

	// The boundary world on the two libraries, through ld.so.
	start = time.Now()
	host := filepath.Join(l.bin, "worldhost")
	// BuildWorldHost reads only the release's name (for generated/NAME/c)
	// and the copy's sources: the release's spec stays the copy's business.
	tr := &builder.Tree{Root: l.mod, Spec: &spec.Spec{Release: spec.Release{Name: release}}}
	if err := tr.BuildWorldHost(ctx, host, build); err != nil {
		t.Fatalf("step %d (build the world host against generated/%s/c and build/libnrt.so.1): %v", len(l.steps)+1, release, err)
	}
	rootID, err := worldprog.FreeLoopbackRoot()
	if err != nil {
		t.Fatal(err)
	}
	ms := make([]worldprog.Member, worldRanks)
	for r := range ms {
		ms[r] = worldprog.WorldHost(host, false, "LD_LIBRARY_PATH="+build)
	}
	runs, took, err := worldprog.Launch(ctx, ms, rootID, []string{abi.EnvSockTimeout + "=5", "NRTABI_LOG_LEVEL=warn"})
	if err != nil {
		t.Fatalf("step %d (the %d-rank world): %v", len(l.steps)+1, worldRanks, err)
	}
	l.steps = append(l.steps, timed{fmt.Sprintf("build the world host and run %d ranks (the world: %.2f s)", worldRanks, took.Seconds()), time.Since(start)})
	t.Logf("step %d, %s: %.1f s", len(l.steps), l.steps[len(l.steps)-1].name, time.Since(start).Seconds())
	if ok, r := worldprog.Agreed(runs); !ok {
		t.Fatalf("step %d (the %d-rank world on %s's libraries): rank %d exited %d: %v\n%s", len(l.steps), worldRanks, release, r, runs[r].Exit, runs[r].Fields, tail(runs[r].Stderr))
	}

	// check, with the binary installed before the release existed: it
	// finds spec/NAME of the checkout on disk.
	out = l.step(next.check+" (as printed)", next.dir, "sh", "-c", next.check)
	if !strings.Contains(out, "verdict: CLEAN") {
		t.Errorf("step %d (%s): exit 0 but not CLEAN\n%s", len(l.steps), next.check, tail(out))
	}
	for _, f := range []string{builder.LibnrtFile, builder.LibnccomFile} {
		if !strings.Contains(out, f) {
			t.Errorf("step %d (%s): the report does not name build/%s\n%s", len(l.steps), next.check, f, tail(out))
		}
	}
	out = l.step(next.demo+" (as printed)", next.dir, "sh", "-c", next.demo)
	if !strings.Contains(out, "demo OK") {
		t.Errorf("step %d (%s): exit 0 without \"demo OK\"\n%s", len(l.steps), next.demo, tail(out))
	}

	// Nothing outside spec/NAME and the generated trees changed.
	code, status, _ := l.run("", "git", "status", "--porcelain=v1", "-z", "--untracked-files=all")
	if code != 0 {
		t.Fatalf("git status: exit %d\n%s", code, status)
	}
	var stray []string
	changed := 0
	for _, e := range strings.Split(status, "\x00") {
		if len(e) < 4 {
			continue
		}
		changed++
		if p := e[3:]; !generatedPath(p) {
			stray = append(stray, e)
		}
	}
	if len(stray) > 0 {
		t.Errorf("git status shows %d paths outside spec/%s and the generated trees (a user would have to edit or clean them):\n  %s", len(stray), release, strings.Join(stray, "\n  "))
	}

	var b strings.Builder
	for i, s := range l.steps {
		fmt.Fprintf(&b, "\n  %2d  %7.1f s  %s", i+1, s.took.Seconds(), s.name)
	}
	t.Logf("the add-a-release loop for %s: %d paths changed, all generated or spec/%s; files edited by hand: 0; wall time %.1f s:%s",
		release, changed, release, time.Since(l.start).Seconds(), b.String())
}

// printed is the rest of the loop as release new printed it.
type printed struct {
	dir                          string // where its "cd" line goes, relative to the copy ("" the root)
	generate, build, demo, check string
}

// The documented steps (docs/adding-a-release.md), for a line release new
// did not print; which printed line is which step is told by these words.
var documented = []struct {
	words []string
	line  string
}{
	{[]string{"generate", release}, "make generate RELEASE=" + release},
	{[]string{"libnrt", "libnccom", release}, "make libnrt libnccom RELEASE=" + release},
	{[]string{"demo", release}, "go run -tags " + tag + " ./cmd/nrtabi-runtime demo --spec " + release},
	{[]string{"nrtabi check", release}, "nrtabi check --spec " + release + " build/*.so*"},
}

// nextSteps reads release new's "next:" lines: a "cd DIR" (resolved from
// where release new ran) must name the module root, and each documented
// step must be printed.
func (l *loop) nextSteps(out string) printed {
	l.t.Helper()
	var lines []string
	cd := ""
	for _, line := range strings.Split(out, "\n") {
		n, ok := strings.CutPrefix(line, "next: ")
		if !ok {
			continue
		}
		if d, ok := strings.CutPrefix(n, "cd "); ok {
			cd = strings.Trim(d, "'")
			continue
		}
		lines = append(lines, n)
	}
	var p printed
	if cd == "" {
		l.t.Errorf("release new, run from %s, printed no \"next: cd\" to the module root, so its next steps do not run as printed from there:\n%s", subdir, tail(out))
	} else {
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(l.mod, subdir, cd)
		}
		got, err1 := filepath.EvalSymlinks(cd)
		want, err2 := filepath.EvalSymlinks(l.mod)
		if err1 != nil || err2 != nil || got != want {
			l.t.Errorf("release new's \"next: cd %s\" is not the module root %s (%v %v)", cd, l.mod, err1, err2)
		}
	}
	got := make([]string, len(documented))
	for i, d := range documented {
		for _, n := range lines {
			all := true
			for _, w := range d.words {
				all = all && strings.Contains(n, w)
			}
			if all && got[i] == "" {
				got[i] = n
			}
		}
		if got[i] == "" {
			l.t.Errorf("release new printed no next step like %q (its next lines: %q)", d.line, lines)
			got[i] = d.line
		}
	}
	p.generate, p.build, p.demo, p.check = got[0], got[1], got[2], got[3]
	return p
}

// hasLine is whether a line of out holds every word.
func hasLine(out string, words ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		all := true
		for _, w := range words {
			all = all && strings.Contains(line, w)
		}
		if all {
			return true
		}
	}
	return false
}

// tagOf is a release's build tag (docs/generator.md#building-for-a-release).
func tagOf(name string) string {
	return "nrtabi_release_" + strings.NewReplacer(".", "_", "-", "_").Replace(name)
}

// generatedPath is a path (relative to the module root, slash-separated)
// that `release new` or `nrtabi gen --all` writes: spec/NAME and the
// generated trees (docs/generator.md).
func generatedPath(p string) bool {
	switch {
	case strings.HasPrefix(p, "spec/"+release+"/"), strings.HasPrefix(p, "generated/"), strings.HasPrefix(p, "spec/compiled/"):
		return true
	}
	if ok, _ := path.Match("runtime/*/zrelease*", p); ok {
		return true
	}
	ok, _ := path.Match("model/zspec_*.pml", p)
	return ok
}

// copyCheckout copies the files of the working tree (git ls-files: tracked
// and untracked, not ignored; so not build/ and not .git) from root to dst,
// keeping modes and symbolic links, and returns how many it copied.
func copyCheckout(ctx context.Context, root, dst string) (int, error) {
	cmd := exec.CommandContext(ctx, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	list, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("git ls-files in %s (the test copies the module's git checkout): %w", root, err)
	}
	n := 0
	seen := map[string]bool{}
	for _, rel := range strings.Split(string(list), "\x00") {
		if rel == "" || seen[rel] || rel == "build" || strings.HasPrefix(rel, "build/") {
			continue
		}
		seen[rel] = true
		src, to := filepath.Join(root, rel), filepath.Join(dst, rel)
		st, err := os.Lstat(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			return n, err
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return n, err
		}
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(src)
			if err == nil {
				err = os.Symlink(target, to)
			}
			if err != nil {
				return n, err
			}
		case st.Mode().IsRegular():
			data, err := os.ReadFile(src)
			if err == nil {
				err = os.WriteFile(to, data, st.Mode().Perm())
			}
			if err != nil {
				return n, err
			}
		default:
			continue // a submodule or other non-file entry
		}
		n++
	}
	return n, nil
}

// TestGeneratedPath: the git status filter lets through only spec/NAME and
// the generated trees; a hand edit anywhere else is stray.
func TestGeneratedPath(t *testing.T) {
	if tagOf(release) != tag {
		t.Errorf("tag %s, want %s", tag, tagOf(release))
	}
	for p, want := range map[string]bool{
		"spec/" + release + "/structs_nrt.toml":      true,
		"generated/" + release + "/abi/zabi.go":      true,
		"generated/abi/zselect_2_33_0_drop.go":       true,
		"spec/compiled/zcompiled.go":                 true,
		"runtime/libnrt/zrelease_2_33_0_drop.go":     true,
		"model/zspec_2_33_0_drop.pml":                true,
		"spec/2.31.24/structs_nrt.toml":              false, // the parent, edited
		"spec/" + release + "x/release.toml":         false,
		"runtime/collectives/init.go":                false, // a port by hand
		"runtime/collectives/shim.go":                false,
		"runtime/collectives/sub/zrelease_x.go":      false,
		"model/handoff.pml":                          false,
		"Makefile":                                   false,
		"runtime/collectives/spec/" + release + "/a": false, // release new in the wrong place
	} {
		if got := generatedPath(p); got != want {
			t.Errorf("generatedPath(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestCopyCheckout: the copy is the working tree's files as git lists
// them, with their modes, and never build/ or .git.
func TestCopyCheckout(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skipf("skipping: git is not installed (%v)", err)
	}
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "copy")
	files := map[string]os.FileMode{"a.go": 0o644, "sub/run.sh": 0o755, "build/libnrt.so.1": 0o644, "ignored.o": 0o644, "untracked.txt": 0o644}
	for f, mode := range files {
		p := filepath.Join(src, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(src, ".gitignore"), []byte("*.o\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{{"init", "-q"}, {"add", "a.go", "sub/run.sh", "build/libnrt.so.1", ".gitignore"}} {
		if out, err := exec.Command("git", append([]string{"-C", src}, argv...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", argv, err, out)
		}
	}
	n, err := copyCheckout(t.Context(), src, dst)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			r, _ := filepath.Rel(dst, p)
			got = append(got, r)
		}
		return err
	})
	if strings.Join(got, " ") != ".gitignore a.go sub/run.sh untracked.txt" || n != 4 {
		t.Errorf("copied %d: %v, want .gitignore a.go sub/run.sh untracked.txt", n, got)
	}
	if st, err := os.Stat(filepath.Join(dst, "sub/run.sh")); err != nil {
		t.Error(err)
	} else if st.Mode().Perm() != 0o755 {
		t.Errorf("sub/run.sh: mode %v, want 0755", st.Mode())
	}
}
