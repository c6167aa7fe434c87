package pkgfile

import (
	"strconv"
	"strings"
)

const arMagic = "!<arch>\n"

// deb reads a .deb: an ar archive of debian-binary, control.tar.* and
// data.tar.*. Only data.tar.* is read (the control files hold no ELF); an
// ar member is not itself searched for archives (no nesting beyond what
// the format needs).
func (r *reader) deb(data []byte) error {
	off := len(arMagic)
	found := false
	last := ""
	for n := 0; off < len(data); n++ {
		if len(data)-off < 60 {
			return r.fail("", "truncated: %d bytes after the last ar member, too few for a 60-byte member header", len(data)-off)
		}
		h := data[off : off+60]
		name := strings.TrimRight(string(h[:16]), " ")
		if string(h[58:60]) != "`\n" {
			if last == "" {
				return r.fail("", "the first ar header does not end with \"`\\n\": a corrupt archive")
			}
			return r.fail(last, "the ar header after this member, at offset %d, does not end with \"`\\n\" (a member larger than its header declares, or a corrupt archive)", off)
		}
		size, err := strconv.ParseInt(strings.TrimRight(string(h[48:58]), " "), 10, 64)
		if err != nil || size < 0 {
			return r.fail(name, "ar size field %q is not a decimal size", strings.TrimRight(string(h[48:58]), " "))
		}
		off += 60
		if size > int64(len(data)-off) {
			return r.fail(name, "declares %d bytes, but the package ends %d bytes later (truncated)", size, len(data)-off)
		}
		body := data[off : off+int(size)]
		off += int(size)
		if size%2 == 1 && off < len(data) {
			off++ // ar pads members to even offsets
		}
		name = strings.TrimSuffix(name, "/") // GNU ar's form
		last = name
		if n == 0 && name != "debian-binary" {
			// A .deb starts with debian-binary; an ar archive that does
			// not is a static library or the like, not a package.
			return r.fail("", "an ar archive whose first member is not debian-binary: no .deb: %w", ErrNotPackage)
		}
		if !strings.HasPrefix(name, "data.tar") {
			continue
		}
		if found {
			return r.fail(name, "a second data.tar member; a .deb has one")
		}
		found = true
		if err := r.tarball(body, name); err != nil {
			return err
		}
	}
	if !found {
		return r.fail("", "a .deb without a data.tar member")
	}
	return nil
}
