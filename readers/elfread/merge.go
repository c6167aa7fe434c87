package elfread

import (
	"debug/dwarf"
	"fmt"
)

// A dwz'd file's DIEs refer into its supplement (DW_FORM_GNU_ref_alt,
// DW_FORM_GNU_strp_alt, DW_FORM_ref_sup4/8, DW_FORM_strp_sup), which
// debug/dwarf reads as bare numbers: godwarf would see a member's type as
// void and a struct's name as empty. So the type reader gets one merged
// DWARF: the file's sections followed by the supplement's, the alt forms
// rewritten to their local equivalents (ref_addr, strp) and every value
// that crosses moved by the size of what precedes it. The merged offsets
// are the combined offsets of the Debug (the supplement is its first part).

// mainAltForms are the forms of the main file that point into the
// supplement, with the local form of the same size they become.
var mainAltForms = map[uint64]uint64{
	formGNURefAlt:  formRefAddr,
	formGNUStrpAlt: formStrp,
	formRefSup4:    formRefAddr, // 32-bit DWARF only (checked per unit)
	formRefSup8:    formRefAddr, // 64-bit DWARF only
	formStrpSup:    formStrp,
}

// ShareViews makes, once, every debug/dwarf view that Readers of d share
// (the merged view of a file and its supplement, the whole-section view a
// unit with cross-unit references needs, a split part's rewritten
// abbreviations), so that Readers made afterwards by NewReader can each be
// used by a goroutine of its own: they then only read d. The views are
// the one copy; a Reader adds only its own type cache.
func (d *Debug) ShareViews() error {
	if d.alt != nil && len(d.parts) > 0 && d.parts[0] == d.alt {
		if _, err := d.mergedView(); err != nil {
			return err
		}
	}
	for _, p := range d.all() {
		p.goAbbrev()
		for i := 0; ; i++ {
			u, ok, err := p.unit(i)
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			if p.crossUnitRefs(u) {
				if _, err := p.DWARFData(); err != nil {
					return err
				}
				break
			}
		}
	}
	return nil
}

// mergedView is mergedData made once and kept.
func (d *Debug) mergedView() (*dwarf.Data, error) {
	if d.merged == nil {
		data, err := d.mergedData()
		if err != nil {
			return nil, err
		}
		d.merged = data
	}
	return d.merged, nil
}

// mergedData builds the merged view of d and its supplement.
func (d *Debug) mergedData() (*dwarf.Data, error) {
	a := d.alt
	for _, p := range []*Debug{d, a} {
		if err := p.ensure(p.infoZ, len(p.info)); err != nil {
			return nil, err
		}
		if err := p.ensure(p.abbrevZ, len(p.abbrev)); err != nil {
			return nil, err
		}
	}
	cat := func(x, y []byte) []byte { return append(append(make([]byte, 0, len(x)+len(y)), x...), y...) }
	info, abbrev := cat(d.info, a.info), cat(d.abbrev, a.abbrev)
	str, lineStr := cat(d.str, a.str), cat(d.lineStr, a.lineStr)
	mainAb, err := rewriteForms(d.abbrev, mainAltForms)
	if err != nil {
		return nil, InputErrorf(d.Path(), "corrupted DWARF: %w", err)
	}
	copy(abbrev, mainAb)
	m := merger{info: info}
	// The main file: what points into the supplement moves past the main
	// file's bytes.
	err = m.walk(d, 0, func(form uint32, offSize int) (int, uint64, error) {
		switch form {
		case formGNURefAlt:
			return offSize, uint64(len(d.info)), nil
		case formRefSup4, formRefSup8:
			if fixedFormSize(form, 5, 8, offSize) != offSize {
				return 0, 0, fmt.Errorf("DW_FORM_ref_sup%d in %d-bit DWARF", fixedFormSize(form, 5, 8, offSize), offSize*8)
			}
			return offSize, uint64(len(d.info)), nil
		case formGNUStrpAlt, formStrpSup:
			return offSize, uint64(len(d.str)), nil
		}
		return 0, 0, nil
	})
	if err != nil {
		return nil, InputErrorf(d.Path(), "corrupted DWARF: %w", err)
	}
	// The supplement: its own string and cross-unit references move past
	// the main file's, and each unit's abbreviations past the main file's.
	err = m.walk(a, len(d.info), func(form uint32, offSize int) (int, uint64, error) {
		switch form {
		case formStrp:
			return offSize, uint64(len(d.str)), nil
		case formLineStrp:
			return offSize, uint64(len(d.lineStr)), nil
		case formRefAddr:
			return offSize, uint64(len(d.info)), nil
		case formStrx, formStrx1, formStrx2, formStrx3, formStrx4, formGNUStrIndex, formGNURefAlt, formGNUStrpAlt, formRefSup4, formRefSup8, formStrpSup:
			return 0, 0, fmt.Errorf("form %#x in a supplementary file is not understood", form)
		}
		return 0, 0, nil
	})
	if err != nil {
		return nil, InputErrorf(a.Path(), "corrupted DWARF: %w", err)
	}
	for i := 0; ; i++ {
		u, ok, err := a.unit(i)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		at := len(d.info) + u.off + 4 + 2
		if u.offSize == 8 {
			at += 8
		}
		if u.version == 5 {
			at += 2
		}
		if err := m.add(at, u.offSize, uint64(len(d.abbrev))); err != nil {
			return nil, InputErrorf(a.Path(), "corrupted DWARF: unit at %#x: %w", u.off, err)
		}
	}
	data, err := dwarf.New(abbrev, nil, nil, info, nil, nil, nil, str)
	if err != nil {
		return nil, InputErrorf(d.Path(), "corrupted DWARF (with its supplement %s): %w", a.Path(), err)
	}
	for name, b := range map[string][]byte{".debug_str_offsets": d.strOffsets, ".debug_line_str": lineStr, ".debug_addr": d.addr} {
		if len(b) > 0 {
			if err := data.AddSection(name, b); err != nil {
				return nil, InputErrorf(d.Path(), "corrupted DWARF section %s: %w", name, err)
			}
		}
	}
	return data, nil
}

type merger struct {
	info []byte
}

// add moves the n-byte value at at by delta; a value that would no longer
// fit is corruption (the parts are bounded by maxCombined).
func (m *merger) add(at, n int, delta uint64) error {
	if at < 0 || at+n > len(m.info) {
		return fmt.Errorf("value at %#x outside .debug_info", at)
	}
	b := m.info[at : at+n]
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	v += delta
	if n < 8 && v>>(8*n) != 0 {
		return fmt.Errorf("value at %#x overflows %d bytes when merged", at, n)
	}
	for i := 0; i < n; i++ {
		b[i] = byte(v >> (8 * i))
	}
	return nil
}

// walk visits every attribute value of every DIE of p; move says, per
// form, how many bytes to move and by how much (0: leave it).
func (m *merger) walk(p *Debug, base int, move func(form uint32, offSize int) (int, uint64, error)) error {
	if p.order.String() != "LittleEndian" {
		return fmt.Errorf("big-endian DWARF with a supplementary file is not supported")
	}
	sc := &scanner{d: p}
	for i := 0; ; i++ {
		u, ok, err := p.unit(i)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		tab, err := sc.abbrevTable(u, 0)
		if err != nil {
			return err
		}
		sc.u, sc.tab, sc.err = u, tab, nil
		sc.c = newCursor(".debug_info", p.info, u.dieStart, p.order)
		sc.c.Limit(u.end)
		for sc.c.Left() > 0 && sc.failed() == nil {
			code := sc.c.Uleb()
			if code == 0 {
				continue
			}
			a := sc.abbrevAt(code)
			if a == nil {
				break
			}
			for k := range a.attrs {
				form, ok := sc.indirect(a.attrs[k].form)
				if !ok {
					break
				}
				n, delta, err := move(form, u.offSize)
				if err != nil {
					return err
				}
				if n > 0 && delta > 0 {
					if form == formRefAddr && u.version <= 2 {
						n = u.addrSize
					}
					if err := m.add(base+sc.c.Off(), n, delta); err != nil {
						return err
					}
				}
				sc.skipForm(form)
			}
		}
		if err := sc.failed(); err != nil {
			return err
		}
	}
}
