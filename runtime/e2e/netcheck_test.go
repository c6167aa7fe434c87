package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// checkPlugin runs `nrtabi check` on a plugin and returns its output and
// exit status.
func checkPlugin(t *testing.T, path string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, checkerPath(), "check", path).CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("nrtabi check %s: %v\n%s", path, err, out)
	}
	return string(out), code
}

// The tables of the net plugin boundary (spec net_plugin.toml).
var netTables = []string{"ncclNet_v6_t", "ncclNet_v5_t", "ncclNet_v4_t"}

// TestCheckRealPlugin: `nrtabi check` holds aws-ofi-nccl, built with -g,
// to the spec: the three tables' layouts from its DWARF match member by
// member, and the link contract of the plugin role (the table objects
// exported as global data of their type's size) holds. Nothing
// incompatible: exit 0 or 4 (compatible differences are listed).
func TestCheckRealPlugin(t *testing.T) {
	requireWorld(t)
	pl := realPlugin(t)
	out, code := checkPlugin(t, pl.path)
	if code != 0 && code != 4 {
		t.Fatalf("nrtabi check of the real plugin: exit %d, want 0 or 4:\n%s", code, out)
	}
	for _, want := range []string{"role: libnccom-net", "ok   the 3 plugin tables exported as data objects of their type's size"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	for _, tab := range netTables {
		if !regexp.MustCompile(`OK\s+` + tab + `\s`).MatchString(out) {
			t.Errorf("%s is not graded OK against the spec:\n%s", tab, out)
		}
	}
}

// plantedPlugin compiles a stand-in plugin (SONAME libnccom-net.so, with
// -g) from src.
func plantedPlugin(t *testing.T, name, src string) string {
	t.Helper()
	dir := t.TempDir()
	c := filepath.Join(dir, name+".c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "libnccom-net.so")
	if err := tree.BuildProgram(t.Context(), out, []string{c}, "-shared", "-fPIC", "-Wl,-soname,libnccom-net.so"); err != nil {
		t.Fatal(err)
	}
	return out
}

// v6 is an ncclNet_v6_t with the members of the spec (void* for the
// function pointers); first and last let a plant move one member.
func v6(first, last string) string {
	members := []string{"void *init", "void *fini", "void *devices", "void *getProperties", "void *listen", "void *connect",
		"void *accept", "void *regMr", "void *regMrDmaBuf", "void *deregMr", "void *isend", "void *irecv", "void *iflush", "void *test",
		"void *closeSend", "void *closeRecv", "void *closeListen", "void *getMrKey", "void *iwrite", "void *iwriteInline"}
	body := strings.Join(append(append([]string{first}, members...), last), ";\n\t") + ";"
	return "typedef struct {\n\t" + strings.TrimPrefix(body, ";\n\t") + "\n} ncclNet_v6_t;\nncclNet_v6_t ncclNetPlugin_v6 = {0};\n"
}

// TestCheckPlantedPluginFaults: a table whose member moved (name after
// the function pointers) and a table one member short fail the check
// (the incompatible bit, 8, of the exit status), each naming the table.
func TestCheckPlantedPluginFaults(t *testing.T) {
	requireWorld(t)
	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"reordered", v6("", "void *iread;\n\tconst char *name"), []string{"ncclNet_v6_t", "INCOMPATIBLE"}},
		{"short", v6("const char *name", ""), []string{"ncclNet_v6_t", "ncclNetPlugin_v6 is 168 bytes, its type ncclNet_v6_t is 176"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, code := checkPlugin(t, plantedPlugin(t, c.name, c.src))
			if code&8 == 0 {
				t.Errorf("nrtabi check of the %s plugin: exit %d, want the incompatible bit (8):\n%s", c.name, code, out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("the report lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// layoutMember is one member line of a pahole-style listing.
type layoutMember struct {
	name         string
	offset, size string
}

var (
	memberLine = regexp.MustCompile(`^\s*(.*?);\s*/\*\s*(\d+)\s+(\d+)\s*\*/`)
	funcName   = regexp.MustCompile(`\(\*\s*(\w+)\)`)
	lastWord   = regexp.MustCompile(`(\w+)\s*(\[[^\]]*\])*\s*$`)
	sizeLine   = regexp.MustCompile(`/\* size: (\d+),`)
)

// layout reads the members (name, offset, size) and the size of a
// pahole-style listing: pahole's own, or nrtabi show's.
func layout(text string) (ms []layoutMember, size string) {
	for _, line := range strings.Split(text, "\n") {
		if m := sizeLine.FindStringSubmatch(line); m != nil {
			size = m[1]
		}
		m := memberLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		decl := m[1]
		name := ""
		if f := funcName.FindStringSubmatch(decl); f != nil {
			name = f[1]
		} else if w := lastWord.FindStringSubmatch(decl); w != nil {
			name = w[1]
		}
		ms = append(ms, layoutMember{name, m[2], m[3]})
	}
	return ms, size
}

// TestShowRealPluginAgreesWithPahole: `nrtabi show` of the plugin's table
// and properties types lists the members at the offsets and sizes pahole
// reads from the same DWARF.
func TestShowRealPluginAgreesWithPahole(t *testing.T) {
	requireWorld(t)
	pahole, err := exec.LookPath("pahole")
	if err != nil {
		t.Skip("skipped: pahole (Debian dwarves) is not installed; .ci/run installs it")
	}
	pl := realPlugin(t)
	for _, st := range append(slices.Clone(netTables), "ncclNetProperties_v6_t", "ncclNetProperties_v4_t") {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		var perr bytes.Buffer
		cmd := exec.CommandContext(ctx, pahole, "-C", st, pl.path)
		cmd.Stderr = &perr // pahole's complaints about C++ DIEs it skips
		want, err := cmd.Output()
		if err != nil || len(want) == 0 {
			cancel()
			t.Fatalf("pahole -C %s: %v\n%s", st, err, tailLines(perr.String(), 5))
		}
		got, err := exec.CommandContext(ctx, checkerPath(), "show", st, pl.path).CombinedOutput()
		cancel()
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 4 {
			err = nil // compatible differences from the spec, shown inline
		}
		if err != nil {
			t.Fatalf("nrtabi show %s: %v\n%s", st, err, got)
		}
		wm, ws := layout(string(want))
		gm, gs := layout(string(got))
		if len(wm) == 0 || !slices.Equal(wm, gm) || ws != gs {
			t.Errorf("%s: nrtabi show reads %v (size %s), pahole %v (size %s)\nshow:\n%s\npahole:\n%s", st, gm, gs, wm, ws, got, want)
		}
	}
}
