package diff

import (
	"fmt"
	"strings"

	"github.com/nrtabi/nrtabi/layoutcheck/grade"
)

// A member the spec grammar cannot spell (an anonymous union, a member of
// an unnamed struct type) is an opaque range whose covers name it; an
// anonymous one is named by its offset ("<anonymous@8>"). Two releases
// that both have it are matched by position and layout, not by that
// name: the k-th anonymous range of one side is the k-th of the other,
// and a named range is its name's. A pair of the same size is then graded
// as one member that may have moved, never as one removed and another
// added (docs/nrtabi-diff.md#anonymous-members).

// pairCovered turns the opaque ranges of o and n that match into members
// of both layouts, in place.
func pairCovered(o, n *grade.Layout) {
	ok, nk := coverKeys(o), coverKeys(n)
	if len(ok) == 0 || len(nk) == 0 {
		return
	}
	newAt := map[string]int{}
	for i, k := range nk {
		if k != "" {
			newAt[k] = i
		}
	}
	var dropO, dropN []int
	for i, k := range ok {
		j, found := newAt[k]
		if k == "" || !found {
			continue
		}
		ro, rn := o.Opaque[i], n.Opaque[j]
		if ro.End-ro.Off != rn.End-rn.Off {
			continue
		}
		o.Members = append(o.Members, coveredMember(k, ro))
		n.Members = append(n.Members, coveredMember(k, rn))
		dropO, dropN = append(dropO, i), append(dropN, j)
	}
	o.Opaque, n.Opaque = without(o.Opaque, dropO), without(n.Opaque, dropN)
	sortMembers(o)
	sortMembers(n)
}

// coverKeys is each range's identity: its covers, an anonymous one by its
// ordinal among the anonymous ranges; "" for a range that covers nothing.
func coverKeys(l *grade.Layout) []string {
	keys := make([]string, len(l.Opaque))
	anon := 0
	for i, r := range l.Opaque {
		if len(r.Covers) == 0 {
			continue
		}
		parts := make([]string, len(r.Covers))
		for j, c := range r.Covers {
			if strings.HasPrefix(c, "<anonymous") {
				anon++
				c = fmt.Sprintf("<anonymous#%d>", anon)
			}
			parts[j] = c
		}
		keys[i] = strings.Join(parts, ",")
	}
	return keys
}

// coveredMember is a matched range as a member: a byte run of its size,
// named by what it covers.
func coveredMember(key string, r grade.Range) grade.Member {
	size := r.End - r.Off
	return grade.Member{Name: key, Offset: r.Off, Size: size,
		Type: &grade.Type{Kind: grade.TArray, Canon: fmt.Sprintf("opaque[%d]", size), Display: fmt.Sprintf("opaque (%d B)", size), Size: size, Align: 1, Len: size,
			Elem: &grade.Type{Kind: grade.TScalar, Canon: "u8", Display: "u8", Size: 1, Align: 1, Len: -1}}}
}

func without(rs []grade.Range, drop []int) []grade.Range {
	skip := map[int]bool{}
	for _, i := range drop {
		skip[i] = true
	}
	var out []grade.Range
	for i, r := range rs {
		if !skip[i] {
			out = append(out, r)
		}
	}
	return out
}

func sortMembers(l *grade.Layout) {
	ms := l.Members
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && ms[j].Offset < ms[j-1].Offset; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}
