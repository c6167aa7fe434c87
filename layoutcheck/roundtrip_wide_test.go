package layoutcheck

import (
	"debug/elf"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/realworld"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// TestRoundTripWide is the opt-in wide run of the round trip
// (NRTABI_REALWORLD=1; not in make test): every LP64 ELF file with DWARF
// under realworld.Roots, each extracted with --all twice (one worker, then
// two) to the same bytes and checked CLEAN against its own fragment, one
// subtest per file. Objects of another data model are counted, not run:
// the readers refuse them by design.
func TestRoundTripWide(t *testing.T) {
	roots := realworld.Roots(t)
	base, err := compiled.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	other := 0
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() || strings.Contains(p, "/.dwz/") {
				return nil
			}
			f, err := elf.Open(p)
			if err != nil {
				return nil
			}
			defer f.Close()
			if f.Section(".debug_info") == nil && f.Section(".zdebug_info") == nil {
				return nil
			}
			if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 && f.Machine != elf.EM_AARCH64 {
				other++
				return nil
			}
			files = append(files, p)
			return nil
		})
	}
	t.Logf("%d LP64 files with DWARF under %s; %d of another data model not run (refused by design)", len(files), strings.Join(roots, ", "), other)
	if len(files) == 0 {
		t.Fatalf("no file with DWARF under %s: install -dbg packages (libc6-dbg) or set NRTABI_REALWORLD_DIRS", strings.Join(roots, ", "))
	}
	for _, p := range files {
		c := roundTripCase{name: p, path: p, debugDirs: elfread.DefaultDebugDirs, sp: base, all: true}
		t.Run(strings.TrimPrefix(p, "/"), func(t *testing.T) { roundTrip(t, c, release.ExtractOptions{All: true}) })
	}
}
