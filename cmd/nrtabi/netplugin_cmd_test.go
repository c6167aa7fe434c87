package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// netTestPlugin compiles release's test plugin (release/testdata/netplugin)
// with the given PLANT_* defines.
func netTestPlugin(t *testing.T, defines ...string) string {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	src, err := filepath.Abs(filepath.Join("..", "..", "release", "testdata", "netplugin", "plugin.c"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "libnccom-net.so")
	if err := cc.SharedContext(t.Context(), dir, out, "libnccom-net.so", "", []string{src}, append([]string{"-std=c11", "-Wall", "-Wextra", "-Werror", "-fvisibility=hidden"}, defines...)...); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReleaseNewNetPlugin: `release new --binary PLUGIN` alone writes a
// release recording the plugin, says what the plugin shows of itself, and
// `diff` of it against 2.31.24 reports the plugin's tables in the net
// group: the seed's v5 of 24 slots against the plugin's 21 members, and a
// planted loss of the bound table, graded and exit-coded.
func TestReleaseNewNetPlugin(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		name    string
		defines []string
		exit    int
		want    []string
	}{
		{"public", nil, 4, []string{"compatible     net-table-size", "ncclNetPlugin_v5", "24 slots (192 bytes) -> 21 slots (168 bytes)", "the old side's 24 slots (192 bytes) are not its type's members"}},
		{"no-v6", []string{"-DPLANT_NO_V6"}, 12, []string{"incompatible   net-table-removed", "ncclNetPlugin_v6", "the table the old side's libnccom binds"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			so := netTestPlugin(t, tc.defines...)
			dest := filepath.Join(root, tc.name)
			rc, out, errw := runCLI("release", "new", "--spec", "2.31.24", "--name", tc.name, "--out", dest, "--binary", so)
			if rc != 0 {
				t.Fatalf("release new: exit %d\n%s%s", rc, out, errw)
			}
			for _, w := range []string{"as libnccom-net", `net plugin: its tables name it "nrtabi-test-plugin"; the binary shows no version string`, "net\n"} {
				if !strings.Contains(out, w) {
					t.Errorf("release new output lacks %q:\n%s", w, out)
				}
			}
			if rc, out, errw := runCLI("spec", "validate", dest); rc != 0 {
				t.Errorf("the new release does not validate: exit %d\n%s%s", rc, out, errw)
			}
			rc, out, errw = runCLI("diff", "2.31.24", dest)
			if rc != tc.exit {
				t.Errorf("diff: exit %d, want %d\n%s%s", rc, tc.exit, out, errw)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("diff output lacks %q:\n%s", w, out)
				}
			}
			if n := strings.Count(out, "net-table-size"); tc.name == "public" && n != 1 {
				t.Errorf("net-table-size printed %d times, want once:\n%s", n, out)
			}
		})
	}
}
