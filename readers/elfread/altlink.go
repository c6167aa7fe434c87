package elfread

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// supRef is a reference from a file to its supplementary debug file (dwz
// -m): the .gnu_debugaltlink section (GNU) or .debug_sup (DWARF 5).
type supRef struct {
	Path    string // as written: absolute, or relative to the referring file's directory
	BuildID string // hex: the supplement's build-id (.gnu_debugaltlink) or checksum (.debug_sup)
	Section string // which section held the link
}

// maxSupID bounds the build-id or checksum of a supplement (a SHA-1 build-id
// is 20 bytes; 64 leaves room for any hash a producer picks).
const maxSupID = 64

// parseAltLink decodes .gnu_debugaltlink: a NUL-terminated path, then the
// supplement's build-id bytes.
func parseAltLink(b []byte) (supRef, error) {
	i := bytes.IndexByte(b, 0)
	switch {
	case i < 0:
		return supRef{}, fmt.Errorf(".gnu_debugaltlink: the path has no terminating NUL")
	case i == 0:
		return supRef{}, fmt.Errorf(".gnu_debugaltlink: empty path")
	}
	id := b[i+1:]
	if len(id) == 0 || len(id) > maxSupID {
		return supRef{}, fmt.Errorf(".gnu_debugaltlink: build-id of %d bytes (1 to %d expected)", len(id), maxSupID)
	}
	return supRef{Path: string(b[:i]), BuildID: hex.EncodeToString(id), Section: ".gnu_debugaltlink"}, nil
}

// parseDebugSup decodes a DWARF 5 .debug_sup section (§7.3.6): version 5,
// is_supplementary, the supplement's file name, and its checksum. In a
// supplementary file itself (isSup) the name is empty and the checksum is
// the one the files referring to it record.
func parseDebugSup(b []byte, order binary.ByteOrder) (l supRef, isSup bool, err error) {
	c := newCursor(".debug_sup", b, 0, order)
	version := c.Uint(2)
	supFlag := c.U8()
	name := c.CString()
	n := c.Uleb()
	if err := c.Err(); err != nil {
		return supRef{}, false, err
	}
	if version != 5 {
		return supRef{}, false, fmt.Errorf(".debug_sup: version %d (5 expected)", version)
	}
	if supFlag == 0 && len(name) == 0 {
		return supRef{}, false, fmt.Errorf(".debug_sup: empty supplementary file name")
	}
	if n == 0 || n > maxSupID || n > uint64(c.Left()) {
		return supRef{}, false, fmt.Errorf(".debug_sup: checksum of %d bytes (1 to %d expected, %d left)", n, maxSupID, c.Left())
	}
	sum := b[c.Off() : c.Off()+int(n)]
	return supRef{Path: string(name), BuildID: hex.EncodeToString(sum), Section: ".debug_sup"}, supFlag != 0, nil
}

// supChecksum is the checksum a supplementary file's own .debug_sup
// carries ("" when it has none).
func (o *File) supChecksum() string {
	s := o.File.Section(".debug_sup")
	if s == nil {
		return ""
	}
	l, isSup, err := parseDebugSup(o.sectionBytes(s), o.File.ByteOrder)
	if err != nil || !isSup {
		return ""
	}
	return l.BuildID
}

// supLink reads the file's link to a supplement, if it has one.
func (o *File) supLink() (*supRef, error) {
	if s := o.File.Section(".gnu_debugaltlink"); s != nil {
		l, err := parseAltLink(o.sectionBytes(s))
		if err != nil {
			return nil, InputErrorf(o.Path, "%w", err)
		}
		return &l, nil
	}
	if s := o.File.Section(".debug_sup"); s != nil {
		l, isSup, err := parseDebugSup(o.sectionBytes(s), o.File.ByteOrder)
		if err != nil {
			return nil, InputErrorf(o.Path, "%w", err)
		}
		if !isSup {
			return &l, nil
		}
	}
	return nil, nil
}
