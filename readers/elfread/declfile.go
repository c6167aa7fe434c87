package elfread

import (
	"errors"
	"fmt"
	"sync"
)

// DW_AT_decl_file is an index into the file names of the unit's line
// table header (.debug_line at the unit's DW_AT_stmt_list). The two
// numberings differ (docs/sarif.md#declaring-file): DWARF 2 to 4 count
// from 1, 0 meaning no file, and a file's directory 0 is the unit's
// DW_AT_comp_dir; DWARF 5 counts from 0, entry 0 being the unit's primary
// source file, and directory 0 is the compilation directory as the table
// itself names it.
const (
	attrStmtList = 0x10

	lnctPath           = 0x1
	lnctDirectoryIndex = 0x2

	// maxLineFiles bounds a line table's directories and files: a unit
	// of a real library names a few hundred.
	maxLineFiles = 1 << 16
	// maxLineTables bounds the tables kept per file, each read once.
	maxLineTables = 1 << 14
)

// lineTables caches the file names of the line tables read so far, by
// the part's DWARF and the table's offset.
type lineTables struct {
	mu     sync.Mutex
	line   map[*Debug][]byte // each part's .debug_line, read on first need
	tables map[lineKey]lineFiles
}

type lineKey struct {
	p   *Debug
	off uint64
}

type lineFiles struct {
	files []string
	err   error
}

// DeclFile names the file that a DIE's DW_AT_decl_file index names: off
// is the DIE's combined offset (a typemodel node's Offset) and index its
// DeclFile. The path is as the line table builds it: the file's
// directory, under the unit's compilation directory when relative. A
// split unit of a .dwo file reads the table .debug_line.dwo starts with;
// a unit of a .dwp package is refused by name (its table is a
// contribution the package index locates), as is an index past the table.
func (d *Debug) DeclFile(off uint64, index uint32) (string, error) {
	p, lo := d.part(off)
	if p == nil {
		return "", fmt.Errorf("DIE offset %#x is in no part of the DWARF", off)
	}
	if p.dwo && p.Via != ViaDWO {
		return "", errors.New("a unit of a .dwp package: its decl_file is not resolved")
	}
	u, err := p.unitContaining(lo)
	if err != nil {
		return "", err
	}
	stmt, compDir, ok, err := p.unitLineInfo(u)
	if err != nil {
		return "", err
	}
	section := "line"
	switch {
	case p.dwo && !ok:
		// A split unit names no table: its file names are the header-only
		// table at the start of .debug_line.dwo.
		section, stmt = "line.dwo", 0
	case !ok:
		return "", fmt.Errorf("the unit at %#x has no DW_AT_stmt_list", u.off)
	}
	lt := &d.decl
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if lt.tables == nil {
		lt.line, lt.tables = map[*Debug][]byte{}, map[lineKey]lineFiles{}
	}
	k := lineKey{p, stmt}
	lf, seen := lt.tables[k]
	if !seen {
		sec, ok := lt.line[p]
		if !ok {
			if sec, err = p.File.debugSection(section); err != nil {
				return "", err
			}
			lt.line[p] = sec
		}
		lf.files, lf.err = p.lineFileNames(sec, stmt, compDir)
		if len(lt.tables) < maxLineTables {
			lt.tables[k] = lf
		}
	}
	if lf.err != nil {
		return "", lf.err
	}
	f, err := fileAt(u.version, lf.files, index)
	if err != nil {
		return "", fmt.Errorf("%w (the line table at %#x)", err, stmt)
	}
	return f, nil
}

// fileAt is the file a decl_file index names in a table's list: DWARF
// 2-4 count from 1 (0 is no file), DWARF 5 from 0 (the unit's own file).
func fileAt(version int, files []string, index uint32) (string, error) {
	i := int64(index)
	if version < 5 {
		if index == 0 {
			return "", errors.New("decl_file 0: no file")
		}
		i--
	}
	if i >= int64(len(files)) {
		return "", fmt.Errorf("decl_file %d is past the %d files", index, len(files))
	}
	return files[i], nil
}

// unitLineInfo reads a unit DIE's DW_AT_stmt_list and DW_AT_comp_dir.
func (d *Debug) unitLineInfo(u *unit) (stmt uint64, compDir string, ok bool, err error) {
	sc := &scanner{d: d, u: u}
	tab, err := sc.abbrevTable(u, 0)
	if err != nil {
		return 0, "", false, err
	}
	sc.tab = tab
	sc.strOffBase = defaultStrOffBase(u)
	sc.c = newCursor(".debug_info", d.info, u.dieStart, d.order)
	sc.c.Limit(u.end)
	code := sc.c.Uleb()
	if code == 0 {
		return 0, "", false, sc.failed()
	}
	a := sc.abbrevAt(code)
	if a == nil {
		return 0, "", false, sc.failed()
	}
	type strAttr struct {
		form uint32
		v    uint64
		s    []byte
	}
	var dirA *strAttr
	read := func(form uint32) *strAttr {
		if form == formString {
			return &strAttr{form: form, s: sc.c.CString()}
		}
		return &strAttr{form: form, v: sc.readUint(form)}
	}
	for i := range a.attrs {
		as := &a.attrs[i]
		form, fok := sc.indirect(as.form)
		if !fok {
			break
		}
		switch as.attr {
		case attrStmtList:
			stmt, ok = sc.readUint(form), true
		case attrCompDir:
			dirA = read(form)
		case attrStrOffsetsBase:
			sc.strOffBase = sc.readUint(form)
		default:
			sc.skipForm(form)
		}
	}
	// Strings are resolved after the loop: DW_AT_str_offsets_base may
	// follow the attributes that index through it.
	str := func(a *strAttr) string {
		switch {
		case a == nil:
			return ""
		case a.form == formString:
			return string(a.s)
		}
		return string(sc.strValue(a.form, a.v))
	}
	compDir = str(dirA)
	if err := sc.failed(); err != nil {
		return 0, "", false, fmt.Errorf("unit at %#x: %w", u.off, err)
	}
	return stmt, compDir, ok, nil
}
