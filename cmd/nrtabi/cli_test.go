package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/internal/testbin"
)

// nrtabi is this command built with CGO_ENABLED=0: every test that runs the
// binary also proves it needs no C toolchain.
var nrtabi = testbin.New(".", "nrtabi", []string{"CGO_ENABLED=0"})

func TestMain(m *testing.M) {
	rc := m.Run()
	nrtabi.Remove()
	os.Exit(rc)
}

func nrtabiBinary(t *testing.T) string { return nrtabi.Path(t) }

// TestPureGo: no package of this module that nrtabi links has cgo files.
func TestPureGo(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if .CgoFiles}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, gen.Module+"/") {
			t.Errorf("nrtabi links the cgo package %s (the runtime side belongs in cmd/nrtabi-runtime)", p)
		}
	}
	nrtabiBinary(t)
}

func TestVersion(t *testing.T) {
	out, err := exec.Command(nrtabiBinary(t), "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// A build in a checkout carries "(devel)" or, stamped from git, a
	// pseudo-version; go install github.com/nrtabi/nrtabi/cmd/nrtabi@v1.2.3 carries v1.2.3.
	want := regexp.MustCompile(`^nrtabi github\.com/nrtabi/nrtabi (\(devel\)|v\S+)\nbuilt with go1\.\S+ \S+/\S+\nembedded spec releases: 2\.20\.0-synthetic, 2\.31\.24, 2\.32\.0-synthetic \(default 2\.31\.24\)\n$`)
	if !want.Match(out) {
		t.Errorf("nrtabi version:\n%s", out)
	}
	if rc, _, errw := runCLI("version", "extra"); rc != cli.ExitUsage || !strings.Contains(errw, `unexpected argument "extra"`) {
		t.Errorf("version extra: exit %d %s", rc, errw)
	}
}

// TestHelpEveryCommand iterates the registry, so a new command cannot miss
// its synopsis, flags or example: "help CMD", "CMD -h" and "help GROUP".
func TestHelpEveryCommand(t *testing.T) {
	names := newApp().Names()
	for _, want := range []string{"check", "diff", "extract", "gen", "release new", "show", "spec show", "spec validate", "version"} {
		if !strings.Contains(strings.Join(names, "|")+"|", want+"|") {
			t.Errorf("no command %q in %v", want, names)
		}
	}
	for _, n := range names {
		words := strings.Fields(n)
		for _, args := range [][]string{append([]string{"help"}, words...), append(words, "-h"), append(words, "--help")} {
			rc, out, errw := runCLI(args...)
			if errw != "" {
				t.Errorf("%v: stderr %q (help goes to stdout)", args, errw)
			}
			if rc != 0 {
				t.Errorf("%v: exit %d", args, rc)
			}
			for _, w := range []string{"usage: nrtabi " + n, "example:\n  nrtabi " + n} {
				if !strings.Contains(out, w) {
					t.Errorf("%v: lacks %q:\n%s", args, w, out)
				}
			}
			if n != "version" && !strings.Contains(out, "flags:\n  -") {
				t.Errorf("%v: lists no flags:\n%s", args, out)
			}
		}
	}
	groups := newApp().Groups()
	if strings.Join(groups, ",") != "release,spec" {
		t.Errorf("groups %v", groups)
	}
	for _, g := range groups {
		rc, out, errw := runCLI("help", g)
		if rc != 0 || !strings.Contains(out, "usage: nrtabi "+g+" COMMAND") || !strings.Contains(out, "example:\n  nrtabi "+g+" ") {
			t.Errorf("help %s: exit %d %q %q", g, rc, out, errw)
		}
		for _, n := range names {
			if strings.HasPrefix(n, g+" ") && !strings.Contains(out, n) {
				t.Errorf("help %s does not list %s", g, n)
			}
		}
	}
	if rc, _, errw := runCLI("help", "frobnicate"); rc != cli.ExitUsage || !strings.Contains(errw, "the commands are: check") {
		t.Errorf("help frobnicate: exit %d %s", rc, errw)
	}
}

// TestStrayArguments: an argument a command does not take is a usage
// error, never silently ignored; spec validate's one positional is a spec,
// read by the same resolver as --spec.
func TestStrayArguments(t *testing.T) {
	for _, args := range [][]string{
		{"gen", "--all", "--check", "stray"},
		{"release", "new", "--name", "x", "--binary", "f", "stray"},
		{"spec", "validate", "2.31.24", "2.32.0-synthetic"},
		{"spec", "validate", "--spec", "2.31.24", "2.32.0-synthetic"},
		{"spec", "show", "2.31.24", "stray"},
		// show STRUCT FILE... takes many inputs (docs/nrtabi-show.md#many-inputs): no stray place there.
		{"extract", "a.so", "b.so"},
		{"diff", "2.31.24", "2.31.24", "2.31.24"},
	} {
		rc, _, errw := runCLI(args...)
		if rc != cli.ExitUsage || !strings.Contains(errw, "usage: nrtabi") {
			t.Errorf("%v: exit %d, want %d with a usage line; stderr %q", args, rc, cli.ExitUsage, errw)
		}
	}
	rc, out, errw := runCLI("spec", "validate", "2.32.0-synthetic")
	if rc != 0 || !strings.Contains(out, "spec/2.32.0-synthetic (embedded): valid") || !strings.Contains(out, "release 2.32.0-synthetic ") {
		t.Errorf("spec validate 2.32.0-synthetic: exit %d\n%s%s", rc, out, errw)
	}
}

// TestGenSameTreeFromAnyDirectory: `nrtabi gen --all` resolves the tree
// from the module root, so run from the root (make generate), from gen/
// (go generate) or from a cgo package it finds the committed tree current.
func TestGenSameTreeFromAnyDirectory(t *testing.T) {
	root, err := gen.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	root, _ = filepath.Abs(root)
	for _, dir := range []string{".", "gen", "runtime/nrt"} {
		t.Run(dir, func(t *testing.T) {
			t.Chdir(filepath.Join(root, dir))
			if rc, out, errw := runCLI("gen", "--all", "--check"); rc != 0 || !strings.Contains(out, "up to date") {
				t.Errorf("from %s: exit %d\n%s%s", dir, rc, out, errw)
			}
		})
	}
}
