package cli

import (
	"fmt"
	"strings"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/spec"
)

// SpecSummary is the one-screen count of a valid spec: `nrtabi spec
// validate` and the demo print it.
func SpecSummary(s *spec.Spec) string {
	var b strings.Builder
	nec, nrt := 0, 0
	for _, r := range s.Reverse {
		if strings.HasPrefix(r.Name, "nec_") {
			nec++
		} else {
			nrt++
		}
	}
	guarded := 0
	for _, f := range s.Forward {
		if f.Guard == spec.Guarded {
			guarded++
		}
	}
	fields, opaque := 0, 0
	for _, st := range s.Structs {
		fields += len(st.Fields)
		opaque += len(st.Opaque)
	}
	var nodes []string
	for _, n := range s.VersionNodes {
		nodes = append(nodes, n.Name)
	}
	fmt.Fprintf(&b, "release %s (libnrt %s, libnccom %s)\n", s.Release.Name, s.Release.LibNRT.SONAME, s.Release.LibNCCOM.SONAME)
	fmt.Fprintf(&b, "  identity:  runtime %s, collectives %s, libnrt git %s\n",
		orUnknown(s.Release.RuntimeVersion), orUnknown(s.Release.CollectivesVersion), orUnknown(s.Release.LibNRT.OwnGit()))
	fmt.Fprintf(&b, "  forward:   %d forward (dlsym 0..%d, slots %#x..%#x, %d guarded + %d exempt)\n",
		len(s.Forward), len(s.Forward)-1, s.SlotTable.Base, s.SlotTable.Top, guarded, len(s.Forward)-guarded)
	fmt.Fprintf(&b, "  reverse:   %d+%d reverse (%d nec_ + %d nrt_), %d total\n", nec, nrt, nec, nrt, len(s.Reverse))
	fmt.Fprintf(&b, "  versions:  %s\n", strings.Join(nodes, ", "))
	fmt.Fprintf(&b, "  structs:   %d (%d known fields, %d opaque ranges, %d asserted sizes and offsets)\n",
		len(s.Structs), fields, opaque, gen.CountAsserts(s))
	fmt.Fprintf(&b, "  constants: %d, enums: %d, messages: %d, contradictions recorded: %d\n",
		len(s.Constants), len(s.Enums), len(s.Messages), len(s.Contradictions))
	return b.String()
}

// orUnknown is v, or "unknown" for a fact the release does not hold (or,
// for a git hash, only carries from its parent: spec.Library.OwnGit).
func orUnknown(v string) string {
	if v == "" {
		return "unknown"
	}
	return v
}
