package release

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/hostile"
	"github.com/nrtabi/nrtabi/readers/elfread"
)

// libcDebugFile is libc6-dbg's debug file of this machine's libc, where
// the machine has it.
const libcDebugFile = "/usr/lib/debug/.build-id/93/ac61ec5a8eb1396f9fbd350e3169a558528a40.debug"

// TestODRConflictsByNodes: the ODR comparison finds the same conflicts,
// with the same words, through the one pass's index (each definition's
// node and its first, Index.Node and Named.First) as through ScanAll's
// index and AllTypes' graph (every layout looked up by offset): on two
// units breaking the rule in each way odrUnits holds (size, members, a
// member's size, bitfields), where it must find the four, and on libc's
// debug file (20,076 later definitions), where the one pass must give
// nodes.
func TestODRConflictsByNodes(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	odr, err := hostile.ODRObject(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{odr.Path}
	if _, err := os.Stat(libcDebugFile); err == nil {
		paths = append(paths, libcDebugFile)
	} else {
		t.Logf("libc's debug file not tried (libc6-dbg): %v", err)
	}
	conflicts := func(path string, onePass bool) (string, int) {
		t.Helper()
		obj, err := elfread.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer obj.Close()
		dbg, err := elfread.OpenDebugFile(context.Background(), obj, elfread.Lookup{AllowMissing: true})
		if err != nil {
			t.Fatal(err)
		}
		defer dbg.Close()
		var idx *elfread.Index
		if onePass {
			idx, _, err = dbg.ScanAllTypes(context.Background(), 2)
		} else if idx, err = dbg.ScanAll(context.Background(), 2); err == nil {
			_, err = dbg.AllTypes(context.Background(), 2)
		}
		if err != nil {
			t.Fatal(err)
		}
		nodes := 0
		for _, n := range idx.Later {
			if _, ok := idx.Node(n); ok {
				nodes++
			}
		}
		c, err := newExtractor(obj, dbg, nil).odrConflicts(context.Background(), idx, 2)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for name, why := range c.byName {
			lines = append(lines, name+": "+why)
		}
		sort.Strings(lines)
		return fmt.Sprintf("%d copies\n%s", c.copies, strings.Join(lines, "\n")), nodes
	}
	for i, path := range paths {
		want, none := conflicts(path, false)
		got, nodes := conflicts(path, true)
		if got != want {
			t.Errorf("%s: the one pass's conflicts differ from the lookups':\n%s\nwant\n%s", path, got, want)
		}
		if none > 0 || i > 0 && nodes == 0 {
			t.Errorf("%s: %d later definitions with a node through ScanAll, %d through the one pass", path, none, nodes)
		}
		if i == 0 {
			for _, name := range []string{"odr_size", "odr_members", "odr_msize", "odr_bits"} {
				if !strings.Contains(got, "\n"+name+": ") {
					t.Errorf("%s: %s not found in conflict:\n%s", path, name, got)
				}
			}
		}
	}
}
