package pkgfile

import (
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
)

const arMagic = "!<arch>\n"

// maxArNames bounds GNU ar's long-name table ("//"), read into memory.
const maxArNames = 16 << 20

// ar reads an ar archive: a .deb when its first member is debian-binary
// (debian-binary, control.tar.*, data.tar.*; only data.tar.* is read, the
// control files hold no ELF), else a static library, whose ELF members are
// inputs named LIB.a!member.o. An empty archive (glibc's 8-byte libanl.a
// stub) is a static library with no members. No member is itself searched
// for archives (no nesting beyond what the format needs).
func (r *reader) ar(src *io.SectionReader) error {
	size := src.Size()
	off := int64(len(arMagic))
	found := false
	last := ""
	longNames := ""
	if size == off {
		r.pkg.Format = Ar
	}
	for n := 0; off < size; n++ {
		if size-off < 60 {
			return r.fail("", "truncated: %d bytes after the last ar member, too few for a 60-byte member header", size-off)
		}
		var hb [60]byte
		if _, err := src.ReadAt(hb[:], off); err != nil {
			return r.fail("", "cannot read the ar header at offset %d: %w", off, err)
		}
		h := hb[:]
		name := strings.TrimRight(string(h[:16]), " ")
		if string(h[58:60]) != "`\n" {
			if last == "" {
				return r.fail("", "the first ar header does not end with \"`\\n\": a corrupt archive")
			}
			return r.fail(last, "the ar header after this member, at offset %d, does not end with \"`\\n\" (a member larger than its header declares, or a corrupt archive)", off)
		}
		msize, err := strconv.ParseInt(strings.TrimRight(string(h[48:58]), " "), 10, 64)
		if err != nil || msize < 0 {
			return r.fail(name, "ar size field %q is not a decimal size", strings.TrimRight(string(h[48:58]), " "))
		}
		off += 60
		if msize > size-off {
			return r.fail(name, "declares %d bytes, but the package ends %d bytes later (truncated)", msize, size-off)
		}
		body := io.NewSectionReader(src, off, msize)
		start := off
		off += msize
		if msize%2 == 1 && off < size {
			off++ // ar pads members to even offsets
		}
		if n == 0 {
			r.pkg.Format = Deb
			if name != "debian-binary" && name != "debian-binary/" {
				// A .deb starts with debian-binary; an ar archive
				// that does not is a static library.
				r.pkg.Format = Ar
			}
		}
		if r.pkg.Format == Ar {
			if name, err = r.arName(name, body, &longNames); err != nil {
				return err
			}
			last = name
			if name == "" {
				continue // the symbol table or the long-name table
			}
			if err := r.arMember(name, body, start); err != nil {
				return err
			}
			if r.got != nil {
				return errFound
			}
			continue
		}
		name = strings.TrimSuffix(name, "/") // GNU ar's form
		last = name
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
	if !found && r.pkg.Format == Deb {
		return r.fail("", "a .deb without a data.tar member")
	}
	return nil
}

// arName is a static library member's name as ar stores it: "name/" (GNU),
// "/N" an offset into the long-name table "//", "#1/N" (BSD: the name
// is the first N bytes of the body). "" for the symbol tables and the
// long-name table, which are no members.
func (r *reader) arName(raw string, body *io.SectionReader, long *string) (string, error) {
	switch {
	case raw == "/" || raw == "/SYM64/" || raw == "__.SYMDEF" || raw == "__.SYMDEF SORTED":
		return "", nil
	case raw == "//":
		if body.Size() > maxArNames {
			return "", r.fail("//", "a long-name table of %d bytes, more than %d", body.Size(), maxArNames)
		}
		b := make([]byte, body.Size())
		if _, err := io.ReadFull(body, b); err != nil {
			return "", r.fail("//", "cannot read the long-name table: %w", err)
		}
		*long = string(b)
		return "", nil
	case strings.HasPrefix(raw, "/"):
		at, err := strconv.Atoi(raw[1:])
		if err != nil || at < 0 || at >= len(*long) {
			return "", r.fail(raw, "names a long name at offset %q, outside the long-name table", raw[1:])
		}
		s := (*long)[at:]
		if i := strings.Index(s, "/\n"); i >= 0 {
			s = s[:i]
		} else if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[:i]
		}
		return s, nil
	case strings.HasPrefix(raw, "#1/"):
		n, err := strconv.Atoi(raw[3:])
		if err != nil || n < 0 || int64(n) > body.Size() || n > 4096 {
			return "", r.fail(raw, "a BSD long name of %q bytes, not inside the member", raw[3:])
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(body, b); err != nil {
			return "", r.fail(raw, "cannot read the name: %w", err)
		}
		return strings.TrimRight(string(b), "\x00"), nil
	}
	return strings.TrimSuffix(raw, "/"), nil
}

// arMember reads one static library member, whose body starts at start in
// the file: an ELF object is an input, read again from where the archive
// stores it (no decompression, no walk to it: libc.a has 1700 members).
func (r *reader) arMember(name string, body *io.SectionReader, start int64) error {
	// A BSD name sits at the start of the body: what is left is the file.
	pos, _ := body.Seek(0, io.SeekCurrent)
	r.at = start + pos
	rest := io.NewSectionReader(body, pos, body.Size()-pos)
	data, elf, err := r.body(rest, rest.Size(), false)
	if err != nil {
		return r.streamErr(name, err, "the archive ends inside this member (truncated)")
	}
	// ar keeps members of one name side by side (a static library may
	// hold two init.o): the second is named init.o[2], not refused.
	if r.names[path.Clean("/"+name)] {
		for k := 2; ; k++ {
			if n := fmt.Sprintf("%s[%d]", name, k); !r.names[path.Clean("/"+n)] {
				name = n
				break
			}
		}
	}
	return r.file(name, data, elf)
}
