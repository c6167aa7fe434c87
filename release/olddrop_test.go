package release

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
)

// The older-drop loop (docs/adding-a-release.md#an-older-drop): a header
// tree of our own making, modelled on a drop older than the parent
// (testdata/olddrop/README lists what it plants), taken through the five
// documented steps in a copy of the checkout, from a subdirectory, each
// step as release new printed it.
const (
	oldRelease = "2.29.0-olddrop"
	oldTag     = "nrtabi_release_2_29_0_olddrop"
	// oldSubdir is where the user stands; oldTree is the tree named from there.
	oldSubdir = "release/diff"
	oldTree   = "../testdata/olddrop/include"
	// oldLoopLimit bounds the whole loop; each step gets what is left.
	oldLoopLimit = 15 * time.Minute
)

// oldLoop is one run of the loop in a copy of the module.
type oldLoop struct {
	t      *testing.T
	ctx    context.Context
	mod    string
	nrtabi string
	env    []string
	steps  []string
	start  time.Time
}

// run runs argv in dir (relative to the copy): its exit status and output.
func (l *oldLoop) run(dir string, argv ...string) (int, string) {
	l.t.Helper()
	name := argv[0]
	if name == "nrtabi" {
		name = l.nrtabi // the installed binary, as PATH in l.env finds it
	}
	cmd := exec.CommandContext(l.ctx, name, argv[1:]...)
	cmd.Dir = filepath.Join(l.mod, dir)
	cmd.Env = l.env
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	l.steps = append(l.steps, fmt.Sprintf("%7.1f s  %s (in %s)", time.Since(start).Seconds(), strings.Join(argv, " "), orModRoot(dir)))
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && l.ctx.Err() == nil:
		return ee.ExitCode(), out.String()
	case err != nil:
		l.t.Fatalf("`%s` in %s: %v (the loop's time limit, or it could not start)\n%s", strings.Join(argv, " "), orModRoot(dir), err, lastOf(out.String()))
	}
	return 0, out.String()
}

// must runs a step that must exit 0.
func (l *oldLoop) must(dir string, argv ...string) string {
	l.t.Helper()
	code, out := l.run(dir, argv...)
	if code != 0 {
		l.t.Fatalf("step `%s` in %s exited %d\n%s", strings.Join(argv, " "), orModRoot(dir), code, lastOf(out))
	}
	return out
}

func orModRoot(dir string) string {
	if dir == "" {
		return "the module root"
	}
	return dir
}

func lastOf(s string) string {
	const max = 6000
	if len(s) > max {
		return "...\n" + s[len(s)-max:]
	}
	return s
}

// TestOlderDropLoop: release new --headers on the older-drop tree, run
// from a subdirectory of a fresh copy of the checkout with an installed
// nrtabi, writes a spec whose diff shows each planted class (a parent
// opaque type now described, three runtime-used fields absent, an
// enumerator renamed, boundary pointees described, no anonymous member
// misgraded); check of the same tree against it is CLEAN; its printed
// steps run as printed (make generate, make libnrt libnccom, the demo,
// check of both libraries CLEAN); the generated header asserts the tree's
// sizes; git status shows only spec/NAME and generated files; and a check
// of a binary holding none of the spec's structs exits non-zero. Each
// step's wall time and the loop's are logged.
func TestOlderDropLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the older-drop loop in -short mode: it generates and builds a release")
	}
	for _, tool := range []string{"git", "make", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping the older-drop loop: %s is not installed (%v)", tool, err)
		}
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("skipping the older-drop loop: no go command in PATH (%v)", err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	limit := oldLoopLimit
	if d, ok := t.Deadline(); ok && time.Until(d)-30*time.Second < limit {
		limit = time.Until(d) - 30*time.Second
	}
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	l := &oldLoop{t: t, ctx: ctx, mod: filepath.Join(tmp, "nrtabi"), start: time.Now()}
	cache, err := exec.CommandContext(ctx, goCmd, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOCACHE: %v", err)
	}
	// One build cache with the outer test, and -trimpath, so the copy's
	// packages are compiled once across runs (as runtime/e2e/addrelease).
	l.env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "GOCACHE="+strings.TrimSpace(string(cache)),
		"GOTOOLCHAIN=local", "GO="+goCmd, "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -trimpath"), "CGO_ENABLED=1",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=nrtabi test", "GIT_AUTHOR_EMAIL=test@nrtabi.invalid",
		"GIT_COMMITTER_NAME=nrtabi test", "GIT_COMMITTER_EMAIL=test@nrtabi.invalid", "MAKEFLAGS=", "NRTABI_LOG_LEVEL=warn")
	if err := copyTree(ctx, root, l.mod); err != nil {
		t.Fatalf("copying the checkout: %v", err)
	}
	for _, argv := range [][]string{{"git", "init", "-q"}, {"git", "add", "-A"}, {"git", "commit", "-q", "-m", "before the release"}} {
		l.must("", argv...)
	}
	nrtabi := filepath.Join(bin, "nrtabi")
	l.nrtabi = nrtabi
	l.must("", goCmd, "build", "-o", nrtabi, "./cmd/nrtabi")

	// Step 1, as documented, from a subdirectory.
	relOut := l.must(oldSubdir, "nrtabi", "release", "new", "--name", oldRelease, "--headers", oldTree)
	out := relOut
	if strings.Contains(out, "(exit ") {
		t.Errorf("release new exited 0 but printed an exit status:\n%s", lastOf(out))
	}
	for _, want := range [][]string{
		{"struct-described", "enc_host_mem_t", "opaque"},               // 1: an opaque type the headers define
		{"field-removed", "nrt_instance_info_t.arch_name"},             // 2: absent fields
		{"field-removed", "nrt_instance_info_t.device_revision"},       //
		{"field-removed", "enc_nccl_comm_node.context_id"},             //
		{"enumerator-renamed", "NRT_STATUS", "NRT_EXEC_OUT_OF_BOUNDS"}, // 3: an enum refreshed
		{"struct-size", "net_ops_info_t", "88 -> 96"},                  // 4: boundary pointees that changed
		{"struct-size", "net_src_addr_t", "56 -> 48"},                  //
		{"struct-added", "enc_alg_hier"},                               // 4 and 5: reached through net_ops_info_t.hier
		{"note:", "nrt/nccom_net.h", "compiled after nrt/nrt_types.h"}, // 6: an order that satisfies it
	} {
		if !lineWith(out, want...) {
			t.Errorf("release new: no line with %q:\n%s", want, lastOf(out))
		}
	}
	specDir := filepath.Join(l.mod, "spec", oldRelease)
	for file, wants := range map[string][]string{
		"structs.toml": {"[[struct.absent]]\n  name = \"arch_name\"", "[[struct.absent]]\n  name = \"device_revision\"", "[[struct.absent]]\n  name = \"context_id\""},
		"release.toml": {"[release.headers]", "prelude = [\"stddef.h\", \"stdint.h\"", "opaque_type = [\"enc_host_mem_t\""},
	} {
		data, err := os.ReadFile(filepath.Join(specDir, file))
		if err != nil {
			t.Fatalf("release new wrote no spec/%s/%s: %v", oldRelease, file, err)
		}
		for _, w := range wants {
			if !strings.Contains(string(data), w) {
				t.Errorf("spec/%s/%s lacks %q", oldRelease, file, w)
			}
		}
	}
	// The spec is true to the tree it was made from.
	if out := l.must(oldSubdir, "nrtabi", "check", "--spec", oldRelease, "--headers", oldTree); !strings.Contains(out, "verdict: CLEAN") {
		t.Errorf("check --spec %s --headers %s: not CLEAN\n%s", oldRelease, oldTree, lastOf(out))
	}
	cd, steps := printedSteps(relOut)
	if cd == "" {
		t.Fatalf("release new printed no `next: cd`:\n%s", lastOf(relOut))
	}
	if !filepath.IsAbs(cd) {
		cd = filepath.Join(l.mod, oldSubdir, cd)
	}
	rel, err := filepath.Rel(l.mod, cd)
	if err != nil || rel != "." {
		if a, b := evalOr(cd), evalOr(l.mod); a != b {
			t.Fatalf("release new's `next: cd %s` is not the module root %s", cd, l.mod)
		}
	}
	if len(steps) != 4 {
		t.Fatalf("release new printed %d next steps, want the 4 of docs/adding-a-release.md: %q", len(steps), steps)
	}
	for i, step := range steps {
		out := l.must("", "sh", "-c", step)
		switch i {
		case 2:
			if !strings.Contains(out, "demo OK") {
				t.Errorf("`%s`: no \"demo OK\"\n%s", step, lastOf(out))
			}
		case 3:
			if !strings.Contains(out, "verdict: CLEAN") {
				t.Errorf("`%s`: not CLEAN\n%s", step, lastOf(out))
			}
		}
	}
	// The generated header asserts the tree's sizes, not the parent's, and
	// puts enc_alg_hier's anonymous union (an opaque range after a u32 and
	// an alignment gap) at 8, where the tree has it, not at the gap's start
	// (docs/generator.md#padding).
	h, err := os.ReadFile(filepath.Join(l.mod, "generated", oldRelease, "c", "nrtabi.h"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"sizeof(struct nrt_instance_info) == 8,", "sizeof(struct enc_nccl_comm_node) == 80,", "sizeof(struct net_src_addr) == 48,", "sizeof(struct net_ops_info) == 96,",
		"sizeof(struct enc_alg_hier) == 24,", "offsetof(struct enc_alg_hier, nrtabi_opaque_8) == 8,"} {
		if !bytes.Contains(h, []byte(w)) {
			t.Errorf("generated/%s/c/nrtabi.h does not assert %s", oldRelease, w)
		}
	}
	// A check that found nothing does not pass.
	if code, out := l.run("", "nrtabi", "check", "--spec", oldRelease, nrtabi); code == 0 {
		t.Errorf("check of a file holding no spec struct exited 0:\n%s", out)
	}
	// Nothing outside spec/NAME and the generated trees changed.
	_, status := l.run("", "git", "status", "--porcelain=v1", "-z", "--untracked-files=all")
	for _, e := range strings.Split(status, "\x00") {
		if len(e) > 3 && !loopPath(e[3:]) {
			t.Errorf("git status shows %q outside spec/%s and the generated trees", e, oldRelease)
		}
	}
	t.Logf("the older-drop loop for %s: files edited by hand 0, wall time %.1f s:\n  %s", oldRelease, time.Since(l.start).Seconds(), strings.Join(l.steps, "\n  "))
}

// printedSteps are release new's "next:" lines: the cd and the steps.
func printedSteps(out string) (cd string, steps []string) {
	for _, line := range strings.Split(out, "\n") {
		n, ok := strings.CutPrefix(line, "next: ")
		if !ok {
			continue
		}
		if d, ok := strings.CutPrefix(n, "cd "); ok {
			cd = strings.Trim(d, "'")
			continue
		}
		steps = append(steps, n)
	}
	return cd, steps
}

func evalOr(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// lineWith is whether a line of out holds every word.
func lineWith(out string, words ...string) bool {
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

// loopPath is a path the loop may change: spec/NAME and the generated
// trees (docs/adding-a-release.md).
func loopPath(p string) bool {
	switch {
	case strings.HasPrefix(p, "spec/"+oldRelease+"/"), strings.HasPrefix(p, "generated/"), strings.HasPrefix(p, "spec/compiled/"):
		return true
	}
	if ok, _ := path.Match("runtime/*/zrelease*", p); ok {
		return true
	}
	ok, _ := path.Match("model/zspec_*.pml", p)
	return ok
}

// copyTree copies the checkout's files as git lists them (tracked and
// untracked, not ignored: never build/ or .git) from root to dst.
func copyTree(ctx context.Context, root, dst string) error {
	cmd := exec.CommandContext(ctx, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	list, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git ls-files in %s: %w", root, err)
	}
	seen := map[string]bool{}
	for _, rel := range strings.Split(string(list), "\x00") {
		if rel == "" || seen[rel] || rel == "build" || strings.HasPrefix(rel, "build/") {
			continue
		}
		seen[rel] = true
		src, to := filepath.Join(root, rel), filepath.Join(dst, rel)
		st, err := os.Lstat(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(src)
			if err == nil {
				err = os.Symlink(target, to)
			}
			if err != nil {
				return err
			}
		case st.Mode().IsRegular():
			data, err := os.ReadFile(src)
			if err == nil {
				err = os.WriteFile(to, data, st.Mode().Perm())
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}
