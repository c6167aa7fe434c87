package elfread

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
)

// Attributes of a skeleton unit (DWARF 5 and the GNU extension to DWARF 4).
const (
	attrCompDir     = 0x1b
	attrDwoName     = 0x76
	attrGNUDwoName  = 0x2130
	attrGNUDwoID    = 0x2131
	tagSkeletonUnit = 0x4a
	tagCompileUnit  = 0x11
)

// skeleton is a unit whose DIEs are in a .dwo file.
type skeleton struct {
	dwoName, compDir string
	id               uint64
	hasID            bool
}

// unitDIE reads the unit DIE of u: its skeleton attributes, if any.
func (d *Debug) unitDIE(u *unit) (sk skeleton, isSkeleton bool, err error) {
	sc := &scanner{d: d, u: u}
	tab, err := sc.abbrevTable(u, 0)
	if err != nil {
		return sk, false, err
	}
	sc.tab = tab
	sc.strOffBase = defaultStrOffBase(u)
	sc.c = newCursor(".debug_info", d.info, u.dieStart, d.order)
	sc.c.Limit(u.end)
	code := sc.c.Uleb()
	if code == 0 {
		return sk, false, sc.failed()
	}
	a := sc.abbrevAt(code)
	if a == nil {
		return sk, false, sc.failed()
	}
	type strAttr struct {
		form  uint32
		v     uint64
		s     []byte
		found bool
	}
	var name, dir strAttr
	read := func(form uint32) strAttr {
		if form == formString {
			return strAttr{form: form, s: sc.c.CString(), found: true}
		}
		return strAttr{form: form, v: sc.readUint(form), found: true}
	}
	for i := range a.attrs {
		as := &a.attrs[i]
		form, ok := sc.indirect(as.form)
		if !ok {
			break
		}
		switch as.attr {
		case attrDwoName, attrGNUDwoName:
			name = read(form)
		case attrCompDir:
			dir = read(form)
		case attrGNUDwoID:
			sk.id, sk.hasID = sc.readUint(form), true
		case attrStrOffsetsBase:
			sc.strOffBase = sc.readUint(form)
		default:
			sc.skipForm(form)
		}
	}
	if err := sc.failed(); err != nil {
		return sk, false, err
	}
	str := func(a strAttr) string {
		if a.form == formString {
			return string(a.s)
		}
		return string(sc.strValue(a.form, a.v))
	}
	if u.unitType == unitTypeSkeleton || u.unitType == unitTypeSplitCompile {
		sk.id, sk.hasID = u.dwoID, true
	}
	isSkeleton = name.found && (u.unitType == unitTypeSkeleton || a.tag == tagCompileUnit && u.version <= 4)
	if name.found {
		sk.dwoName = str(name)
	}
	if dir.found {
		sk.compDir = str(dir)
	}
	return sk, isSkeleton, sc.failed()
}

// mayHaveSkeletons: a file of skeleton units has .debug_addr (the
// skeleton's addresses) or a skeleton first unit; others are not walked
// unit by unit, which would inflate a compressed .debug_info whole.
func (d *Debug) mayHaveSkeletons() bool {
	if d.dwo {
		return false
	}
	if d.File.hasSection(".debug_addr") {
		return true
	}
	u, ok, err := d.unit(0)
	return err == nil && ok && u.unitType == unitTypeSkeleton
}

// attachSplitUnits resolves every skeleton unit of d to its split unit: in
// a .dwp package next to the input (<file>.dwp) or the debug file, else in
// the .dwo the skeleton names (absolute, relative to DW_AT_comp_dir, next to
// the input, next to the debug file). The dwo id must match.
func attachSplitUnits(d *Debug, lk Lookup) error {
	if !d.mayHaveSkeletons() {
		return nil
	}
	var sks []skeleton
	for i := 0; ; i++ {
		u, ok, err := d.unit(i)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if u.typeUnit {
			continue
		}
		sk, is, err := d.unitDIE(u)
		if err != nil {
			return InputErrorf(d.Path(), "corrupted DWARF: unit at %#x: %w", u.off, err)
		}
		if is {
			sks = append(sks, sk)
		}
	}
	if len(sks) == 0 {
		return nil
	}
	if len(sks) > maxSplitUnits {
		return InputErrorf(d.Path(), "%d skeleton units; at most %d are read", len(sks), maxSplitUnits)
	}
	dwps := newDWPs(d)
	defer dwps.release()
	seen := map[uint64]bool{}
	for _, sk := range sks {
		if !sk.hasID {
			return InputErrorf(d.Path(), "skeleton unit for %s has no dwo id", sk.dwoName)
		}
		// One part per split unit, however many skeletons name it.
		if seen[sk.id] {
			continue
		}
		seen[sk.id] = true
		if p, err := dwps.find(sk.id); err != nil {
			return err
		} else if p != nil {
			if err := d.addPart(p); err != nil {
				return err
			}
			continue
		}
		p, tried := findDWO(d, sk)
		if p != nil {
			if err := d.addPart(p); err != nil {
				p.Close()
				return err
			}
			continue
		}
		tried = append(dwps.tried(), tried...)
		if err := d.missing(lk, fmt.Sprintf("the split DWARF file %s (dwo id %#x)", sk.dwoName, sk.id), tried); err != nil {
			return err
		}
	}
	return nil
}

// maxSplitUnits bounds the split units of one file (the largest C++
// programs have some tens of thousands of compilation units).
const maxSplitUnits = 1 << 17

// findDWO tries the places a skeleton's .dwo may be.
func findDWO(d *Debug, sk skeleton) (*Debug, []string) {
	var cands candidates
	add := cands.add
	switch {
	case filepath.IsAbs(sk.dwoName):
		add(filepath.Clean(sk.dwoName))
	case sk.compDir != "":
		add(filepath.Join(sk.compDir, sk.dwoName))
	}
	if base := filepath.Base(sk.dwoName); base != "." && base != ".." && base != "/" {
		for _, next := range []string{d.Input.Path, d.Path()} {
			if next != "" { // "": a File from NewFile is next to nothing
				add(filepath.Join(filepath.Dir(next), base))
			}
		}
	}
	var tried []string
	for _, p := range cands.paths {
		var idErr string
		part, why := tryPart(d.Input, p, func(c *File) bool { return true }, ViaDWO, "", ".dwo")
		if part != nil {
			id, ok, err := part.splitID()
			switch {
			case err != nil:
				idErr = err.Error()
			case !ok:
				idErr = "its unit has no dwo id"
			case id != sk.id:
				idErr = fmt.Sprintf("has dwo id %#x, the skeleton wants %#x", id, sk.id)
			default:
				return part, nil
			}
			part.Close()
			why = idErr
		}
		tried = append(tried, candidate(p, why))
	}
	return nil, tried
}

// splitID is the dwo id of a split part's first unit.
func (d *Debug) splitID() (uint64, bool, error) {
	u, ok, err := d.unit(0)
	if err != nil || !ok {
		return 0, false, err
	}
	if u.unitType == unitTypeSplitCompile {
		return u.dwoID, true, nil
	}
	sk, _, err := d.unitDIE(u)
	if err != nil {
		return 0, false, err
	}
	return sk.id, sk.hasID, nil
}

// dwps opens the .dwp packages a file may have, once each.
type dwps struct {
	d     *Debug
	paths []string
	objs  []*File
	index []map[uint64]contribution
	why   []string
	used  []bool
	open  bool
}

func newDWPs(d *Debug) *dwps {
	w := &dwps{d: d}
	for _, next := range []string{d.Input.Path, d.Path()} {
		if p := next + ".dwp"; next != "" && (len(w.paths) == 0 || w.paths[0] != p) {
			w.paths = append(w.paths, p)
		}
	}
	return w
}

func (w *dwps) load() {
	if w.open {
		return
	}
	w.open = true
	w.objs = make([]*File, len(w.paths))
	w.index = make([]map[uint64]contribution, len(w.paths))
	w.why = make([]string, len(w.paths))
	w.used = make([]bool, len(w.paths))
	for i, p := range w.paths {
		if !regularFile(p) {
			continue
		}
		o, err := Open(p)
		if err != nil {
			w.why[i] = errMsg(err)
			continue
		}
		s := o.File.Section(".debug_cu_index")
		if s == nil {
			w.why[i] = "has no .debug_cu_index"
			o.Close()
			continue
		}
		var err2 error
		if s.Flags&elf.SHF_COMPRESSED != 0 || s.Type == elf.SHT_NOBITS {
			err2 = fmt.Errorf(".debug_cu_index is compressed or empty")
		} else {
			w.index[i], err2 = parseCUIndex(o.sectionBytes(s), o.File.ByteOrder)
		}
		err = err2
		if err != nil {
			w.why[i] = errMsg(err)
			o.Close()
			continue
		}
		w.objs[i] = o
	}
}

// find returns the part of the unit with this id from the first package
// that has it.
func (w *dwps) find(id uint64) (*Debug, error) {
	w.load()
	for i, o := range w.objs {
		if o == nil {
			continue
		}
		c, ok := w.index[i][id]
		if !ok {
			continue
		}
		p, err := loadDebugSuffix(w.d.Input, o, ViaDWP, ".dwo")
		if err == nil {
			err = p.slice(c)
		}
		if err != nil {
			// Not wrapped: err is an *InputError about the same file, and
			// its Msg alone keeps the path from being named twice.
			return nil, InputErrorf(w.paths[i], "unit %#x: %v", id, errMsg(err))
		}
		if !w.used[i] {
			p.owned, w.used[i] = o, true
		}
		return p, nil
	}
	return nil, nil
}

func (w *dwps) tried() []string {
	w.load()
	var out []string
	for i, p := range w.paths {
		switch {
		case w.objs[i] != nil:
			out = append(out, p+" (has no unit with that id)")
		default:
			out = append(out, candidate(p, w.why[i]))
		}
	}
	return out
}

// release closes the packages no part took.
func (w *dwps) release() {
	for i, o := range w.objs {
		if o != nil && !w.used[i] {
			o.Close()
		}
	}
}

// slice narrows a .dwp part to one unit's contributions.
func (d *Debug) slice(c contribution) error {
	if err := d.ensure(d.infoZ, len(d.info)); err != nil {
		return err
	}
	if err := d.ensure(d.abbrevZ, len(d.abbrev)); err != nil {
		return err
	}
	d.infoZ, d.abbrevZ = nil, nil
	cut := func(name string, b []byte, r [2]uint64) ([]byte, error) {
		if r[0] > uint64(len(b)) || r[1] > uint64(len(b))-r[0] {
			return nil, fmt.Errorf("%s contribution of %d bytes at %d runs past the section's %d bytes", name, r[1], r[0], len(b))
		}
		return b[r[0] : r[0]+r[1] : r[0]+r[1]], nil
	}
	var err error
	if d.info, err = cut(".debug_info.dwo", d.info, c.Info); err != nil {
		return err
	}
	if d.abbrev, err = cut(".debug_abbrev.dwo", d.abbrev, c.Abbrev); err != nil {
		return err
	}
	if c.StrOffsets[1] > 0 {
		if d.strOffsets, err = cut(".debug_str_offsets.dwo", d.strOffsets, c.StrOffsets); err != nil {
			return err
		}
	}
	if len(d.info) == 0 || len(d.abbrev) == 0 {
		return fmt.Errorf("empty .debug_info.dwo or .debug_abbrev.dwo contribution")
	}
	return nil
}

// goStrOffsets is the string offsets table as debug/dwarf reads it: it
// takes DW_AT_str_offsets_base from the unit DIE, which a DWARF 5 split
// unit does not have (its base is past the table's header), so the header
// is cut off here.
func (d *Debug) goStrOffsets() []byte {
	if !d.dwo {
		return d.strOffsets
	}
	u, ok, err := d.unit(0)
	if err != nil || !ok {
		return d.strOffsets
	}
	base := defaultStrOffBase(u)
	if base > uint64(len(d.strOffsets)) {
		return nil
	}
	return d.strOffsets[base:]
}

// goAbbrev is the abbreviation table as debug/dwarf can read it: in a split
// unit, the GNU index forms and the address index forms (whose addresses
// live in the skeleton's file) are rewritten to forms of the same size
// debug/dwarf knows. Type layouts never read those values.
func (d *Debug) goAbbrev() []byte {
	if !d.dwo {
		return d.abbrev
	}
	if d.goAb == nil {
		b, err := rewriteSplitForms(d.abbrev)
		if err != nil {
			b = d.abbrev // debug/dwarf reports the corruption itself
		}
		d.goAb = b
	}
	return d.goAb
}

// splitFormFor maps a form debug/dwarf cannot read in a split unit to one
// of the same encoding it can.
var splitFormFor = map[uint64]uint64{
	formGNUStrIndex:  formStrx,
	formGNUAddrIndex: formUdata,
	formAddrx:        formUdata,
	formAddrx1:       formData1,
	formAddrx2:       formData2,
	formAddrx4:       formData4,
}

// rewriteSplitForms copies an abbreviation section with the forms of
// splitFormFor replaced. A form's ULEB128 keeps its length (a shorter value
// is padded with continuation bytes), so no offset moves.
func rewriteSplitForms(ab []byte) ([]byte, error) {
	return rewriteForms(ab, splitFormFor)
}

// rewriteForms copies an abbreviation section with the forms of a map
// replaced, keeping every offset.
func rewriteForms(ab []byte, forms map[uint64]uint64) ([]byte, error) {
	out := append([]byte(nil), ab...)
	c := newCursor(".debug_abbrev.dwo", ab, 0, binary.LittleEndian)
	for c.Left() > 0 && c.Err() == nil {
		if code := c.Uleb(); code == 0 {
			continue // the end of one table; another may follow
		}
		c.Uleb() // tag
		c.U8()   // children
		for c.Err() == nil {
			at := c.Uleb()
			from := c.Off()
			fm := c.Uleb()
			to := c.Off()
			if at == 0 && fm == 0 {
				break
			}
			if fm == formImplicitConst {
				c.SkipLeb()
			}
			if nf, ok := forms[fm]; ok && c.Err() == nil {
				putPaddedUleb(out[from:to], nf)
			}
		}
	}
	return out, c.Err()
}

// putPaddedUleb writes v (< 128) as a ULEB128 of exactly len(b) bytes.
func putPaddedUleb(b []byte, v uint64) {
	if len(b) == 0 {
		return
	}
	for i := range b {
		b[i] = 0x80
	}
	b[0] |= byte(v)
	b[len(b)-1] &^= 0x80
}

func regularFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
