package layoutcheck

import (
	"fmt"
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/nrtabi/nrtabi/layoutcheck/elfread"
	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/spec"
)

// CheckStruct compares one DWARF layout, read by r, with its spec struct.
func CheckStruct(r *elfread.Reader, st *spec.Struct, l *elfread.Layout) []Finding {
	c := &structCheck{r: r}
	c.check(st, l, st.Name, 0)
	return c.out
}

type structCheck struct {
	r   *elfread.Reader
	out []Finding
	// assumed holds the (spec struct, DWARF struct) pairs whose layouts are
	// being compared, so a self-referential renamed struct is compared once.
	assumed map[layoutPair]bool
}

func (c *structCheck) add(sev Severity, kind, strct, field, exp, act, format string, args ...any) {
	c.out = append(c.out, Finding{Severity: sev, Kind: kind, Struct: strct, Field: field, Expected: exp, Actual: act, Message: fmt.Sprintf(format, args...)})
}

// isFiller reports whether m is the header generator's stand-in for an
// opaque range of st.
func isFiller(st *spec.Struct, m *elfread.Member) bool {
	return strings.HasPrefix(m.Name, spec.OpaqueMemberPrefix) && st.OpaqueHolding(m.Offset, m.End()) != nil
}

func (c *structCheck) check(st *spec.Struct, l *elfread.Layout, path string, depth int) {
	root := strings.SplitN(path, ".", 2)[0]
	switch {
	case st.Prefix && l.Size < int64(st.Size):
		c.add(Incompatible, KindSize, root, fieldPath(path), fmt.Sprintf(">= %d", st.Size), fmt.Sprint(l.Size),
			"%s: size %d B, but the spec models the first %d B (struct shrunk)", path, l.Size, st.Size)
	case !st.Prefix && l.Size != int64(st.Size):
		verb := "grew"
		if l.Size < int64(st.Size) {
			verb = "shrunk"
		}
		c.add(Incompatible, KindSize, root, fieldPath(path), fmt.Sprint(st.Size), fmt.Sprint(l.Size),
			"%s: size %d B, spec %d B (struct %s)", path, l.Size, st.Size, verb)
	}
	byName := map[string]*elfread.Member{}
	// holder maps a member read through an anonymous struct or union (C11)
	// to the anonymous member holding it: generated headers spell a renamed
	// field both ways in one (docs/generator.md#stable-fields).
	holder := map[*elfread.Member]*elfread.Member{}
	for _, m := range l.Members {
		if !m.Base && m.Name != "" {
			byName[m.Name] = m
		}
	}
	for _, m := range l.Members {
		if m.Base || m.Name != "" {
			continue
		}
		for _, in := range anonymousMembers(m, 0) {
			if _, ok := byName[in.Name]; !ok {
				byName[in.Name] = in
				holder[in] = m
			}
		}
	}
	specNames := map[string]bool{}
	for _, f := range st.Fields {
		specNames[f.Name] = true
	}
	used := map[*elfread.Member]bool{}
	for i := range st.Fields {
		f := &st.Fields[i]
		fp := path + "." + f.Name
		m := byName[f.Name]
		if m == nil {
			m = c.renameOf(st, l, f, specNames, used)
			if m == nil {
				c.add(Incompatible, KindMissingField, root, fieldPath(fp), fmt.Sprintf("%s @%d", f.T, f.Offset), "",
					"%s: missing (spec %s at offset %d, %d B); no member of that name, and none of the same offset, size and type", fp, f.T, f.Offset, f.T.Size())
				continue
			}
			c.add(Compatible, KindRenamed, root, fieldPath(fp), f.Name, m.Name,
				"%s: renamed to %s (same offset %d, size %d, type %s)", fp, m.Name, m.Offset, m.Size, elfread.TypeName(m.Type))
		}
		used[m] = true
		if h := holder[m]; h != nil {
			used[h] = true
		}
		c.field(l, f, m, fp, root, depth)
	}
	for _, m := range l.Members {
		if used[m] || isFiller(st, m) || m.Virtual || m.Size == 0 && m.BitSize == 0 || m.Base && specmatch.EmptyClass(m.Type) {
			continue // virtual bases have no fixed offset; zero-length members take no bytes
		}
		if st.Prefix && m.Offset >= int64(st.Size) {
			continue // beyond the modelled prefix
		}
		name := specmatch.MemberLabel(m)
		if o := opaqueHolding(st, m); o != nil {
			if covered(o, m) {
				continue
			}
			c.add(Compatible, KindAddedOpaque, root, fieldPath(path+"."+name), fmt.Sprintf("opaque %d..%d", o.Offset, o.End()), fmt.Sprintf("%s @%d", elfread.TypeName(m.Type), m.Offset),
				"%s.%s: new member inside the opaque range %d..%d (%s at %d, %d B)", path, name, o.Offset, o.End(), elfread.TypeName(m.Type), m.Offset, m.Size)
			continue
		}
		c.add(Compatible, KindAdded, root, fieldPath(path+"."+name), "", fmt.Sprintf("%s @%d", elfread.TypeName(m.Type), m.Offset),
			"%s.%s: member the spec does not know (%s at %d, %d B), outside every known field and opaque range", path, name, elfread.TypeName(m.Type), m.Offset, m.Size)
	}
	for _, o := range st.Opaque {
		if int64(o.End()) > l.Size && !(st.Prefix) {
			c.add(Incompatible, KindOpaqueBounds, root, fieldPath(path), fmt.Sprintf("%d..%d", o.Offset, o.End()), fmt.Sprint(l.Size),
				"%s: opaque range %d..%d runs past the struct's %d B", path, o.Offset, o.End(), l.Size)
		}
	}
}

// maxAnonymousDepth bounds the anonymous members read through one another.
const maxAnonymousDepth = 8

// anonymousMembers are the named members an unnamed struct or union member
// m makes members of the enclosing struct (C11 6.7.2.1p13), at their offsets
// in it, through nested anonymous members too. Bitfields are left to the
// anonymous member: their offsets need the bit arithmetic of the reader.
func anonymousMembers(m *elfread.Member, depth int) []*elfread.Member {
	st, ok := elfread.Strip(m.Type).(*godwarf.StructType)
	if !ok || st.StructName != "" || depth >= maxAnonymousDepth || m.BitSize != 0 {
		return nil
	}
	var out []*elfread.Member
	for _, f := range st.Field {
		if f == nil || f.BitSize != 0 {
			continue
		}
		in := &elfread.Member{Name: f.Name, Offset: elfread.SatAdd(m.Offset, f.ByteOffset), Size: elfread.TypeSize(f.Type), Type: f.Type}
		if f.Name == "" {
			out = append(out, anonymousMembers(in, depth+1)...)
			continue
		}
		out = append(out, in)
	}
	return out
}

// fieldPath drops the struct name from a dotted path.
func fieldPath(p string) string {
	if i := strings.IndexByte(p, '.'); i >= 0 {
		return p[i+1:]
	}
	return ""
}

func opaqueHolding(st *spec.Struct, m *elfread.Member) *spec.Opaque {
	start := m.Offset
	if m.BitSize > 0 {
		start = m.BitOffset / 8
	}
	return st.OpaqueHolding(start, m.End())
}

func covered(o *spec.Opaque, m *elfread.Member) bool {
	for _, n := range o.Covers {
		if n == m.Name || n == specmatch.MemberLabel(m) {
			return true
		}
	}
	return false
}

// renameOf finds a member that holds the field's bytes under another name:
// same offset, size and type, and not a name the spec gives another field.
func (c *structCheck) renameOf(st *spec.Struct, l *elfread.Layout, f *spec.Field, specNames map[string]bool, used map[*elfread.Member]bool) *elfread.Member {
	for _, m := range l.Members {
		if used[m] || m.Base || m.BitSize > 0 || specNames[m.Name] || isFiller(st, m) {
			continue
		}
		if m.Offset == int64(f.Offset) && m.Size == int64(f.T.Size()) && specmatch.MatchType(f.T, m.Type, 0) == "" {
			return m
		}
	}
	return nil
}

func (c *structCheck) field(l *elfread.Layout, f *spec.Field, m *elfread.Member, fp, root string, depth int) {
	if m.BitSize > 0 {
		c.add(Incompatible, KindBitfield, root, fieldPath(fp), fmt.Sprintf("%s @%d", f.T, f.Offset), fmt.Sprintf("%d-bit field at bit %d", m.BitSize, m.BitOffset),
			"%s: now a %d-bit bitfield at bit %d, spec %s at offset %d", fp, m.BitSize, m.BitOffset, f.T, f.Offset)
		return
	}
	if m.Offset != int64(f.Offset) {
		c.add(Incompatible, KindOffset, root, fieldPath(fp), fmt.Sprint(f.Offset), fmt.Sprint(m.Offset),
			"%s: offset %d, spec %d (field moved)", fp, m.Offset, f.Offset)
	}
	resized := m.Size != int64(f.T.Size())
	if resized {
		c.add(Incompatible, KindFieldSize, root, fieldPath(fp), fmt.Sprint(f.T.Size()), fmt.Sprint(m.Size),
			"%s: size %d B, spec %d B (field resized: %s, spec %s)", fp, m.Size, f.T.Size(), elfread.TypeName(m.Type), f.T)
	}
	why := specmatch.MatchType(f.T, m.Type, 0)
	if why != "" && !resized {
		if c.graded(l, f, m, fp, root, depth) {
			return
		}
		c.add(Incompatible, KindType, root, fieldPath(fp), f.T.String(), elfread.TypeName(m.Type), "%s: %s (field retyped%s)", fp, why, c.flexAlignNote(l, f, m))
	}
	// Embedded structs are compared member by member, recursively, also when
	// resized: the inner findings say what changed.
	if why == "" && f.T.Kind == spec.KindStruct && f.T.Struct != nil && depth < 8 {
		if sd, ok := elfread.Strip(m.Type).(*godwarf.StructType); ok {
			inner, err := c.r.Layout(c.r.GlobalOffset(sd))
			if err != nil {
				c.add(Incompatible, KindType, root, fieldPath(fp), f.T.String(), "", "%s: cannot read the embedded struct: %v", fp, err)
				return
			}
			c.check(f.T.Struct, inner, fp, depth+1)
		}
	}
}
