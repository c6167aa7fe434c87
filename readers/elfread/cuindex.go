package elfread

import (
	"encoding/binary"
	"fmt"
)

// Section ids of a .debug_cu_index column (DWARF 5 §7.3.5.3; the GNU
// version 2 index uses the same numbers for these).
const (
	sectInfo       = 1
	sectAbbrev     = 3
	sectStrOffsets = 6
)

// contribution is where one split unit's parts lie in a .dwp's sections.
type contribution struct {
	Info, Abbrev, StrOffsets [2]uint64 // offset and size in .debug_info.dwo, .debug_abbrev.dwo, .debug_str_offsets.dwo
}

// maxIndexUnits bounds the rows of a unit index (each row is at least 8
// bytes of the section, so the section size bounds them too).
const maxIndexUnits = 1 << 24

// parseCUIndex decodes a .debug_cu_index (GNU version 2 or DWARF 5) into
// the contributions of each unit by its dwo id. Every count is checked
// against the section's size before anything is allocated.
func parseCUIndex(b []byte, order binary.ByteOrder) (map[uint64]contribution, error) {
	c := newCursor(".debug_cu_index", b, 0, order)
	version := c.Uint(4) & 0xffff // DWARF 5: a 2-byte version and 2 bytes of padding
	cols := c.Uint(4)
	units := c.Uint(4)
	slots := c.Uint(4)
	if err := c.Err(); err != nil {
		return nil, err
	}
	if version != 2 && version != 5 {
		return nil, fmt.Errorf(".debug_cu_index: version %d (2 or 5 understood)", version)
	}
	left := uint64(c.Left())
	switch {
	case cols == 0 || cols > 16:
		return nil, fmt.Errorf(".debug_cu_index: %d columns", cols)
	case units > maxIndexUnits || slots > maxIndexUnits:
		return nil, fmt.Errorf(".debug_cu_index: %d units in %d slots", units, slots)
	case slots*12+cols*4+units*cols*8 > left:
		return nil, fmt.Errorf(".debug_cu_index: %d units in %d slots with %d columns need more than the %d bytes left", units, slots, cols, left)
	}
	hashAt := c.Off()
	idxAt := hashAt + int(slots)*8
	colAt := idxAt + int(slots)*4
	offAt := colAt + int(cols)*4
	sizeAt := offAt + int(units*cols)*4
	colOf := map[uint64]int{}
	for i := 0; i < int(cols); i++ {
		id := uint64(order.Uint32(b[colAt+4*i:]))
		if _, dup := colOf[id]; !dup {
			colOf[id] = i
		}
	}
	if _, ok := colOf[sectInfo]; !ok {
		return nil, fmt.Errorf(".debug_cu_index: no .debug_info.dwo column")
	}
	cell := func(at int, row uint64, id uint64) [2]uint64 {
		col, ok := colOf[id]
		if !ok {
			return [2]uint64{}
		}
		i := at + int(row*cols)*4 + col*4
		j := sizeAt - offAt + i
		return [2]uint64{uint64(order.Uint32(b[i:])), uint64(order.Uint32(b[j:]))}
	}
	out := make(map[uint64]contribution, min(units, slots))
	for s := 0; s < int(slots); s++ {
		row := uint64(order.Uint32(b[idxAt+4*s:]))
		if row == 0 {
			continue
		}
		if row > units {
			return nil, fmt.Errorf(".debug_cu_index: slot %d names row %d of %d", s, row, units)
		}
		sig := order.Uint64(b[hashAt+8*s:])
		out[sig] = contribution{
			Info:       cell(offAt, row-1, sectInfo),
			Abbrev:     cell(offAt, row-1, sectAbbrev),
			StrOffsets: cell(offAt, row-1, sectStrOffsets),
		}
	}
	return out, nil
}
