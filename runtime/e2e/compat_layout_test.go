package e2e

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/compat"
	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/runtime/builder"
	"github.com/nrtabi/nrtabi/typemodel"
)

// The silent class in the compat matrix: a pairing that loads is held to
// the bytes of the shared struct the handshake itself sends across the
// seam, nec_version_info_t (libnccom's probe writes it, libnrt reads it:
// docs/sources.md#s001-4). What libnccom meant is its probe's bytes read
// by its own DWARF; what libnrt took is what the Go libnrt's handoff
// reports it read, through linkhost and ld.so. A field whose two values
// differ is the layout outcome (docs/nrtabi-compat.md#prediction-against-reality).

// stubSwappedVersion is a libnccom double whose nec_version_info_t has
// major and minor the other way round: the compat id stays at 0x30, so
// the gate passes and the load succeeds, and libnrt reads the version
// wrong without a word.
const stubSwappedVersion = "compat-swapped-version"

const sharedStruct = "nec_version_info_t"

// buildSwappedVersion builds the double from a copy of the generated stub
// and header with the two members' lines exchanged and their offset
// asserts dropped; the edit must find what it edits.
func buildSwappedVersion(ctx context.Context) error {
	dir := filepath.Join(compatDir, stubSwappedVersion)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	h, err := os.ReadFile(filepath.Join(tree.CDir(), "nrtabi.h"))
	if err != nil {
		return err
	}
	text := string(h)
	major := regexp.MustCompile(`(?m)^\tuint64_t major; [^\n]*\n`)
	minor := regexp.MustCompile(`(?m)^\tuint64_t minor; [^\n]*\n`)
	asserts := regexp.MustCompile(`(?m)^_Static_assert\(offsetof\(struct nec_version_info, (major|minor)\)[^\n]*\n`)
	ma, mi := major.FindStringIndex(text), minor.FindStringIndex(text)
	if ma == nil || mi == nil || mi[0] != ma[1] || len(asserts.FindAllString(text, -1)) != 2 {
		return fmt.Errorf("%s: nec_version_info's major and minor members (one after the other) and their two offset asserts are not where the double's edit expects them", filepath.Join(tree.CDir(), "nrtabi.h"))
	}
	text = text[:ma[0]] + text[mi[0]:mi[1]] + text[ma[0]:ma[1]] + text[mi[1]:]
	text = asserts.ReplaceAllString(text, "")
	files := map[string][]byte{"nrtabi.h": []byte(text)}
	for _, n := range []string{"nccom_stub.c", "libnccom.map"} {
		b, err := os.ReadFile(filepath.Join(tree.CDir(), n))
		if err != nil {
			return err
		}
		files[n] = b
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			return err
		}
	}
	lib, err := filepath.Abs(libnrtDir())
	if err != nil {
		return err
	}
	// nccom_stub.c includes "nrtabi.h" from its own directory first.
	flags := append([]string{"-O2", "-L" + lib, "-l:" + builder.LibnrtFile}, cc.Strict...)
	return cc.SharedContext(ctx, dir, filepath.Join(dir, builder.StubFile), tree.Spec.Release.LibNCCOM.SONAME,
		filepath.Join(dir, "libnccom.map"), []string{filepath.Join(dir, "nccom_stub.c")}, flags...)
}

// probeDumpSource: load libnrt (for libnccom's reverse needs), then
// libnccom, call its probe on a buffer of a known pattern, print the bytes.
const probeDumpSource = `#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	if (dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL) == NULL) { printf("libnrt: %s\n", dlerror()); return 1; }
	void *nc = dlopen(argv[2], RTLD_NOW);
	if (nc == NULL) { printf("libnccom: %s\n", dlerror()); return 1; }
	void (*probe)(void *, uint32_t) = (void (*)(void *, uint32_t))dlsym(nc, "neuronGetVersionInfo");
	if (probe == NULL) { printf("no probe\n"); return 1; }
	unsigned n = 0;
	if (sscanf(argv[3], "%u", &n) != 1 || n == 0 || n > 4096) return 2;
	static unsigned char buf[4096];
	memset(buf, 0xa5, sizeof buf);
	probe(buf, n);
	printf("bytes ");
	for (unsigned i = 0; i < n; i++)
		printf("%02x", buf[i]);
	printf("\n");
	return 0;
}
`

func probeDumpPath() string { return filepath.Join(compatDir, "probedump") }

func buildProbeDump(ctx context.Context) error {
	src := filepath.Join(compatDir, "probedump.c")
	if err := os.WriteFile(src, []byte(probeDumpSource), 0o644); err != nil {
		return err
	}
	return cc.RunContext(ctx, compatDir, "-O1", "-Wall", "-Wextra", "-Werror", "-o", probeDumpPath(), src, "-ldl")
}

// dwarfFields is the struct's top-level scalar members in file's DWARF:
// name -> offset and size.
func dwarfFields(t *testing.T, file, name string) map[string][2]int64 {
	t.Helper()
	f, err := elfread.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := elfread.FindDebug(t.Context(), f, elfread.Lookup{})
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	defer d.Close()
	found, err := d.FindStructs([][]string{{name, strings.TrimSuffix(name, "_t")}})
	if err != nil || len(found) != 1 || found[0] == nil {
		t.Fatalf("%s: no %s in its DWARF (%v)", file, name, err)
	}
	st, err := d.Types().Struct(found[0].Offset)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]int64{}
	for _, fl := range st.Fields {
		if sz := typemodel.SizeOf(fl.Type); sz > 0 && sz <= 8 && fl.BitSize == 0 {
			out[fl.Name] = [2]int64{fl.Offset, sz}
		}
	}
	return out
}

var readBack = regexp.MustCompile(`round trip: neuronGetVersionInfo: ok version ([0-9]+)\.([0-9]+)\.([0-9]+)\.([0-9]+)-\S* compat ([0-9]+)`)

// seamLayout is what crossing the seam did to nec_version_info_t for a
// pairing that loads: "" when every field libnrt read is the value libnccom
// wrote for it, else the first field that is not (libnrt's reading order).
func seamLayout(t *testing.T, libnrt, libnccom string) (string, string) {
	t.Helper()
	size := int64(tree.Spec.StructByName(sharedStruct).Size)
	text, code := runCommand(t, []string{"LD_LIBRARY_PATH="}, probeDumpPath(), libnrt, libnccom, strconv.FormatInt(size, 10))
	raw, err := hex.DecodeString(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), "bytes ")))
	if code != 0 || err != nil || int64(len(raw)) != size {
		t.Fatalf("probedump %s: exit %d (%v)\n%s", libnccom, code, err, text)
	}
	meant := dwarfFields(t, libnccom, sharedStruct)
	text, code = runLinkhostIndex(t, libnrt, libnccom, tree.Spec.ByIndex()[0].Index, "LD_LIBRARY_PATH=")
	m := readBack.FindStringSubmatch(text)
	if code != 0 || m == nil {
		t.Fatalf("linkhost did not report the version libnrt read (exit %d):\n%s", code, text)
	}
	read := map[string]string{"major": m[1], "minor": m[2], "patch": m[3], "maintenance": m[4], "compatibility_version": m[5]}
	var why []string
	for _, name := range []string{"major", "minor", "patch", "maintenance", "compatibility_version"} {
		at, ok := meant[name]
		if !ok || at[1] != 8 || at[0]+8 > size {
			return sharedStruct + "." + name, "libnccom's DWARF has no 8-byte " + name
		}
		wrote := strconv.FormatUint(binary.LittleEndian.Uint64(raw[at[0]:at[0]+8]), 10)
		why = append(why, fmt.Sprintf("%s wrote %s at %d, read %s", name, wrote, at[0], read[name]))
		if wrote != read[name] {
			return sharedStruct + "." + name, strings.Join(why, "; ")
		}
	}
	return "", strings.Join(why, "; ")
}

// observeLayout turns a load that succeeded into the layout outcome when
// the shared struct's bytes disagree.
func observeLayout(t *testing.T, libnrt, libnccom string, obs observed) observed {
	t.Helper()
	field, why := seamLayout(t, libnrt, libnccom)
	t.Logf("the seam: %s", why)
	if field != "" {
		return observed{compat.Layout, field}
	}
	return obs
}
