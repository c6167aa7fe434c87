package compat

import (
	"slices"
	"strconv"
	"strings"

	"github.com/nrtabi/nrtabi/spec"
)

// Set is the spec releases the rules and the fixes are taken from, in
// version order.
type Set struct {
	Specs []*spec.Spec
}

// NewSet orders specs by their release's version numbers.
func NewSet(specs []*spec.Spec) *Set {
	s := &Set{Specs: slices.Clone(specs)}
	slices.SortStableFunc(s.Specs, func(a, b *spec.Spec) int { return compareRelease(a.Release.Name, b.Release.Name) })
	return s
}

// ByName is the release named name, or nil.
func (s *Set) ByName(name string) *spec.Spec {
	for _, sp := range s.Specs {
		if sp.Release.Name == name {
			return sp
		}
	}
	return nil
}

// compareRelease orders "2.20.0-synthetic" < "2.31.24" < "2.32.0-synthetic"
// by their dotted numbers, then by name.
func compareRelease(a, b string) int {
	na, nb := releaseNumbers(a), releaseNumbers(b)
	if c := slices.Compare(na, nb); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func releaseNumbers(name string) []int {
	head, _, _ := strings.Cut(name, "-")
	var out []int
	for _, p := range strings.Split(head, ".") {
		n, err := strconv.Atoi(p)
		if err != nil {
			break
		}
		out = append(out, n)
	}
	return out
}

// nearest is the release of the set closest to home in version order
// (home itself first, then the newer of two equally near) for which ok
// holds, or nil.
func (s *Set) nearest(home string, ok func(*spec.Spec) bool) *spec.Spec {
	at := slices.IndexFunc(s.Specs, func(sp *spec.Spec) bool { return sp.Release.Name == home })
	if at < 0 {
		at = 0
	}
	for d := 0; d < len(s.Specs); d++ {
		for _, i := range []int{at + d, at - d} {
			if i >= 0 && i < len(s.Specs) && ok(s.Specs[i]) {
				return s.Specs[i]
			}
		}
	}
	return nil
}

// compatID is a release's NCCOM_COMPAT_ID, ok false when it has none.
func compatID(sp *spec.Spec) (uint64, bool) {
	c := sp.ConstantByName("NCCOM_COMPAT_ID")
	if c == nil {
		return 0, false
	}
	v, ok := c.Int()
	if !ok || v < 0 {
		return 0, false
	}
	return uint64(v), true
}

// fitsLibnccom: the libnccom binary pairs with the libnrt of release sp by
// sp's rows: its reverse needs are sp's callbacks at their nodes, it
// exports every entry point sp dlsyms, and its compat id (when read) is
// sp's.
func (p *predictor) fitsLibnccom(sp *spec.Spec) bool {
	rev := map[string]string{}
	for _, rv := range sp.Reverse {
		rev[rv.Name] = rv.Version
	}
	for _, n := range p.reverseNeeds() {
		v, ok := rev[n.name]
		if !ok && !n.weak || ok && n.version != "" && v != n.version {
			return false
		}
	}
	for _, f := range sp.ByIndex() {
		if p.nc.exported(f.Name) == nil {
			return false
		}
	}
	if p.ncID.ok {
		if id, ok := compatID(sp); !ok || id != p.ncID.id {
			return false
		}
	}
	return len(sp.Forward) > 0
}

// wholeFix is the fix of a pairing that does not load: the nearest
// release whose libnrt pairs with this libnccom (by the binary's facts),
// and, when the fault is libnccom's (class dlsym, gate, layout; a dlopen
// failure may be libnrt's own), the nearest whose libnccom pairs with this
// libnrt's release (by the spec rows, layouts included).
func (p *predictor) wholeFix(class Class) string {
	var parts []string
	if sp := p.set.nearest(p.homeName(), p.fitsLibnccom); sp != nil {
		parts = append(parts, "a libnrt of release "+sp.Release.Name)
	}
	if p.expectKnown && class != Reverse {
		if sp := p.set.nearest(p.homeName(), func(sp *spec.Spec) bool { return len(pairReasons(p.home, sp)) == 0 }); sp != nil {
			parts = append(parts, "a libnccom of release "+sp.Release.Name)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "use " + strings.Join(parts, ", or ") + " (nearest in the spec set whose pairing loads)"
}
