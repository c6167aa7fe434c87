package compat

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/typemodel"
)

// maxFlatDepth bounds the nesting layout flattens; maxFlatFields the
// members it lists per struct.
const (
	maxFlatDepth  = 8
	maxFlatFields = 4096
)

// member is one flattened member of a struct: its path, byte offset from
// the struct's start, size, and bit position when it is a bitfield.
type member struct {
	path               string
	offset, size       int64
	bitOffset, bitSize int64
}

// flatten lists t's members, embedded aggregates expanded, in order.
func flatten(t *typemodel.Type, prefix string, base int64, depth int, out *[]member) {
	t = typemodel.Strip(t)
	if t == nil || !t.Kind.Aggregate() || depth > maxFlatDepth {
		return
	}
	for i := range t.Fields {
		if len(*out) >= maxFlatFields {
			return
		}
		f := &t.Fields[i]
		name := prefix + f.Name
		if f.Name == "" {
			name = fmt.Sprintf("%s(anon@%d)", prefix, f.Offset)
		}
		// A member of no bytes (a flexible array, an empty struct) puts
		// nothing at any offset: one side may spell it and the other not
		// with the same bytes crossing the seam.
		if f.Size() == 0 && f.BitSize == 0 {
			continue
		}
		*out = append(*out, member{path: name, offset: base + f.Offset, size: f.Size(), bitOffset: f.BitOffset, bitSize: f.BitSize})
		flatten(f.Type, name+".", base+f.Offset, depth+1, out)
	}
}

// sideNames are the two sides of the seam, in the predictor's order.
var sideNames = [2]string{"libnrt", "libnccom"}

// debugOf opens a side's DWARF, or says why it cannot be seen.
func debugOf(ctx context.Context, s *side) (*elfread.Debug, string) {
	d, err := elfread.FindDebug(ctx, s.obj, s.lookup)
	if err != nil {
		return nil, err.Error()
	}
	return d, ""
}

// layout compares, in both sides' DWARF, the structs the release marks as
// shared (side = "both"): the silent disagreement, a struct that crosses
// the seam read at other offsets than it was written at. A side without
// DWARF, or no shared struct in both, is "unknown", never "same".
func (p *predictor) layout(ctx context.Context) string {
	var shared [][]string
	var names []string
	for _, st := range p.home.Structs {
		if st.Side == "both" {
			shared = append(shared, specmatch.StructNames(st))
			names = append(names, st.Name)
		}
	}
	if len(shared) == 0 {
		p.r.Unseen = append(p.r.Unseen, "struct layouts: release "+p.homeName()+" marks no struct as shared")
		return LayoutUnknown
	}
	var types [2][]*typemodel.Type
	var debugs [2]*elfread.Debug
	blind := false
	for i, s := range []*side{p.nrt, p.nc} {
		d, why := debugOf(ctx, s)
		if d == nil {
			p.r.Unseen = append(p.r.Unseen, fmt.Sprintf("struct layouts: %s has no DWARF that could be read (%s); give its debug package with --with (a -dbgsym .deb, a -debuginfo .rpm) or its debug file with --debug-dir", sideNames[i], why))
			blind = true
			continue
		}
		defer d.Close()
		debugs[i] = d
	}
	// Both sides are looked for before giving up, so the report names
	// every side whose layouts it could not see.
	if blind {
		return LayoutUnknown
	}
	for i, d := range debugs {
		who := sideNames[i]
		found, err := d.FindStructs(shared)
		if err != nil {
			p.r.Unseen = append(p.r.Unseen, fmt.Sprintf("struct layouts: %s's DWARF: %v", who, err))
			return LayoutUnknown
		}
		types[i] = make([]*typemodel.Type, len(shared))
		for k, f := range found {
			if f == nil {
				continue
			}
			if t, err := d.Types().Struct(f.Offset); err == nil {
				types[i][k] = t
			}
		}
	}
	compared, differs := 0, false
	var onlyOne []string
	for k, name := range names {
		a, b := types[0][k], types[1][k]
		if a == nil || b == nil {
			if a != nil {
				onlyOne = append(onlyOne, name+" (libnrt's; libnccom's DWARF describes no such struct)")
			} else if b != nil {
				onlyOne = append(onlyOne, name+" (libnccom's; libnrt's DWARF describes no such struct)")
			}
			continue
		}
		compared++
		if f, ok := compareStruct(name, a, b); !ok {
			differs = true
			p.add(f)
		}
	}
	if len(onlyOne) > 0 {
		p.r.Unseen = append(p.r.Unseen, "struct layouts: in one side's DWARF only, so not compared: "+strings.Join(onlyOne, ", "))
	}
	switch {
	case differs:
		return LayoutDiffers
	case compared == 0:
		p.r.Unseen = append(p.r.Unseen, "struct layouts: no shared struct ("+strings.Join(names, ", ")+") is in both sides' DWARF")
		return LayoutUnknown
	}
	return LayoutSame
}

// compareStruct holds libnrt's layout a to libnccom's b: size, then each
// member by path; the first difference is the finding.
func compareStruct(name string, a, b *typemodel.Type) (Finding, bool) {
	fail := func(subject, msg string) (Finding, bool) {
		return Finding{Class: Layout, Fatal: true, Subject: subject,
			Message: msg + ": the two sides read and write it at different places and nothing in the load says so",
			Fix:     "rebuild both sides from one release's headers (nrtabi check each against its spec names the side that drifted)"}, false
	}
	if sa, sb := typemodel.SizeOf(a), typemodel.SizeOf(b); sa != sb {
		return fail(name, fmt.Sprintf("%s is %d bytes in libnrt's DWARF, %d in libnccom's", name, sa, sb))
	}
	var ma, mb []member
	flatten(a, "", 0, 0, &ma)
	flatten(b, "", 0, 0, &mb)
	byPath := map[string]member{}
	for _, m := range mb {
		byPath[m.path] = m
	}
	for _, m := range ma {
		o, ok := byPath[m.path]
		switch {
		case !ok:
			return fail(name+"."+m.path, fmt.Sprintf("%s.%s (offset %d) is in libnrt's DWARF, not in libnccom's", name, m.path, m.offset))
		case o.offset != m.offset || o.size != m.size || o.bitOffset != m.bitOffset || o.bitSize != m.bitSize:
			return fail(name+"."+m.path, fmt.Sprintf("%s.%s is at offset %d size %d in libnrt's DWARF, offset %d size %d in libnccom's", name, m.path, m.offset, m.size, o.offset, o.size))
		}
		delete(byPath, m.path)
	}
	if len(byPath) > 0 {
		rest := make([]string, 0, len(byPath))
		for k := range byPath {
			rest = append(rest, k)
		}
		slices.Sort(rest)
		return fail(name+"."+rest[0], fmt.Sprintf("%s.%s is in libnccom's DWARF, not in libnrt's", name, rest[0]))
	}
	return Finding{}, true
}
