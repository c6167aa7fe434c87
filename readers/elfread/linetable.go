package elfread

import (
	"fmt"
	"path"
)

// The file names of a .debug_line table header, DWARF 2 to 5
// (docs/sarif.md#declaring-file): what DeclFile indexes.

// lineFileNames reads the file names of the line table header at off in
// sec, each as a path joined with its directory (and with compDir when
// that is relative).
func (d *Debug) lineFileNames(sec []byte, off uint64, compDir string) ([]string, error) {
	if off >= uint64(len(sec)) {
		return nil, fmt.Errorf("DW_AT_stmt_list %#x is past the %d bytes of .debug_line", off, len(sec))
	}
	c := newCursor(".debug_line", sec, int(off), d.order)
	offSize := 4
	length := c.Uint(4)
	if length == 0xffffffff {
		length, offSize = c.Uint(8), 8
	}
	if c.Err() != nil || length > uint64(c.Left()) {
		return nil, fmt.Errorf("the line table at %#x claims %d bytes; .debug_line has %d left", off, length, c.Left())
	}
	c.Limit(c.Off() + int(length))
	version := int(c.Uint(2))
	if version < 2 || version > 5 {
		return nil, fmt.Errorf("the line table at %#x has version %d; 2 to 5 are understood", off, version)
	}
	if version == 5 {
		c.Skip(2) // address_size, segment_selector_size
	}
	hlen := c.Uint(offSize)
	if c.Err() != nil || hlen > uint64(c.Left()) {
		return nil, fmt.Errorf("the line table at %#x: header length %d past its end", off, hlen)
	}
	c.Limit(c.Off() + int(hlen))
	c.Skip(1) // minimum_instruction_length
	if version >= 4 {
		c.Skip(1) // maximum_operations_per_instruction
	}
	c.Skip(3) // default_is_stmt, line_base, line_range
	opBase := c.U8()
	if opBase > 0 {
		c.Skip(uint64(opBase) - 1)
	}
	lr := &lineReader{d: d, c: &c, offSize: offSize}
	if version == 5 {
		dirs := lr.entries5()
		files := lr.entries5()
		if err := c.Err(); err != nil {
			return nil, fmt.Errorf("the line table at %#x: %w", off, err)
		}
		// Directory 0 is the compilation directory as the table names it:
		// the base of the relative directories after it.
		base := compDir
		if len(dirs) > 0 && path.IsAbs(dirs[0].path) {
			base = dirs[0].path
		}
		out := make([]string, 0, len(files))
		for _, f := range files {
			dir := ""
			if f.dir < uint64(len(dirs)) {
				dir = dirs[f.dir].path
			} else {
				return nil, fmt.Errorf("the line table at %#x: file %q names directory %d of %d", off, f.path, f.dir, len(dirs))
			}
			out = append(out, joinPath(base, dir, f.path))
		}
		return out, nil
	}
	// DWARF 2-4: directories 1.. then files 1.., each list ended by an
	// empty string; directory 0 is the unit's compilation directory.
	dirs := []string{compDir}
	for c.Err() == nil {
		s := c.CString()
		if len(s) == 0 {
			break
		}
		if len(dirs) > maxLineFiles {
			return nil, fmt.Errorf("the line table at %#x names more than %d directories", off, maxLineFiles)
		}
		dirs = append(dirs, string(s))
	}
	var out []string
	for c.Err() == nil {
		s := c.CString()
		if len(s) == 0 {
			break
		}
		di := c.Uleb()
		c.SkipLeb() // mtime
		c.SkipLeb() // length
		if len(out) > maxLineFiles {
			return nil, fmt.Errorf("the line table at %#x names more than %d files", off, maxLineFiles)
		}
		if di >= uint64(len(dirs)) {
			return nil, fmt.Errorf("the line table at %#x: file %q names directory %d of %d", off, s, di, len(dirs))
		}
		out = append(out, joinPath(compDir, dirs[di], string(s)))
	}
	if err := c.Err(); err != nil {
		return nil, fmt.Errorf("the line table at %#x: %w", off, err)
	}
	return out, nil
}

type lineReader struct {
	d       *Debug
	c       *cursor
	offSize int
}

type lineEntry struct {
	path string
	dir  uint64
}

// entries5 reads a DWARF 5 entry format and the entries it describes
// (directories or files): each a path and a directory index, the other
// content types stepped over by their forms.
func (lr *lineReader) entries5() []lineEntry {
	c := lr.c
	nfmt := int(c.U8())
	type pair struct{ lnct, form uint64 }
	fmts := make([]pair, 0, nfmt)
	for i := 0; i < nfmt && c.Err() == nil; i++ {
		fmts = append(fmts, pair{c.Uleb(), c.Uleb()})
	}
	n := c.Uleb()
	if c.Err() != nil {
		return nil
	}
	if n > maxLineFiles || n > uint64(c.Left()) {
		c.Fail("%d entries in a line table header of %d bytes left", n, c.Left())
		return nil
	}
	out := make([]lineEntry, 0, n)
	for i := uint64(0); i < n && c.Err() == nil; i++ {
		var e lineEntry
		for _, f := range fmts {
			switch f.lnct {
			case lnctPath:
				e.path = lr.str(f.form)
			case lnctDirectoryIndex:
				e.dir = lr.num(f.form)
			default:
				lr.skip(f.form)
			}
		}
		out = append(out, e)
	}
	return out
}

// str reads a path in one of the forms a line table header uses.
func (lr *lineReader) str(form uint64) string {
	c := lr.c
	switch form {
	case formString:
		return string(c.CString())
	case formLineStrp, formStrp:
		v := c.Uint(lr.offSize)
		tab, name := lr.d.lineStr, ".debug_line_str"
		if form == formStrp {
			tab, name = lr.d.str, ".debug_str"
		}
		s, ok := cStringAt(tab, v)
		if !ok {
			c.Fail("path offset %#x outside the %d bytes of %s", v, len(tab), name)
		}
		return string(s)
	}
	c.Fail("a path in form %#x, which a line table header does not use", form)
	return ""
}

// num reads a directory index.
func (lr *lineReader) num(form uint64) uint64 {
	c := lr.c
	switch form {
	case formData1:
		return c.Uint(1)
	case formData2:
		return c.Uint(2)
	case formData4:
		return c.Uint(4)
	case formData8:
		return c.Uint(8)
	case formUdata:
		return c.Uleb()
	}
	c.Fail("a directory index in form %#x", form)
	return 0
}

// skip steps over a value of a content type not read (timestamp, size,
// MD5, a vendor's).
func (lr *lineReader) skip(form uint64) {
	c := lr.c
	switch form {
	case formData1:
		c.Skip(1)
	case formData2:
		c.Skip(2)
	case formData4:
		c.Skip(4)
	case formData8:
		c.Skip(8)
	case formData16:
		c.Skip(16)
	case formUdata, formSdata:
		c.SkipLeb()
	case formString:
		c.CString()
	case formLineStrp, formStrp, formSecOffset:
		c.Skip(uint64(lr.offSize))
	case formBlock:
		c.Skip(c.Uleb())
	case formBlock1:
		c.Skip(c.Uint(1))
	case formBlock2:
		c.Skip(c.Uint(2))
	case formBlock4:
		c.Skip(c.Uint(4))
	default:
		c.Fail("a line table header value in form %#x", form)
	}
}

// joinPath is file under dir under compDir, each only when the one
// after it is relative.
func joinPath(compDir, dir, file string) string {
	if path.IsAbs(file) {
		return path.Clean(file)
	}
	if dir != "" && !path.IsAbs(dir) && compDir != "" {
		dir = path.Join(compDir, dir)
	}
	if dir == "" {
		dir = compDir
	}
	if dir == "" {
		return path.Clean(file)
	}
	return path.Join(dir, file)
}
