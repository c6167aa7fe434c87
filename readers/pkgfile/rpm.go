package pkgfile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
)

var (
	rpmLeadMagic   = []byte{0xed, 0xab, 0xee, 0xdb}
	rpmHeaderMagic = []byte{0x8e, 0xad, 0xe8, 0x01}
)

// Header tags and types the payload needs (rpm's lib/rpmtag.h).
const (
	tagPayloadFormat     = 1124
	tagPayloadCompressor = 1125
	typeString           = 6
	rpmLead              = 96
	maxHeaderEntries     = 1 << 16
)

// rpm reads an .rpm: the 96-byte lead, the signature header (padded to 8
// bytes), the main header, and the payload: a cpio archive compressed as
// the main header's PAYLOADCOMPRESSOR says, read as a stream to its end.
func (r *reader) rpm(src *io.SectionReader) error {
	size := src.Size()
	if size < rpmLead {
		return r.fail("", "truncated: %d bytes, shorter than an rpm's %d-byte lead", size, rpmLead)
	}
	off := int64(rpmLead)
	_, end, err := r.rpmHeader(src, off, "signature header")
	if err != nil {
		return err
	}
	off = (end + 7) &^ 7
	tags, end, err := r.rpmHeader(src, off, "main header")
	if err != nil {
		return err
	}
	format, ok := tags[tagPayloadFormat]
	if ok && format != "cpio" {
		return r.fail("", "payload format %q: only cpio payloads are read", format)
	}
	comp, ok := tags[tagPayloadCompressor]
	if !ok {
		comp = "gzip" // rpm's default when the tag is absent
	}
	payload := io.NewSectionReader(src, end, size-end)
	var head [6]byte
	n, _ := payload.ReadAt(head[:], 0)
	got := compression(head[:n])
	if got == "" {
		got = "none"
	}
	if comp != got && !(comp == "lzma" && got == "none") {
		return r.fail("", "the header's PAYLOADCOMPRESSOR is %q but the payload starts as %s; refused rather than guessed", comp, got)
	}
	r.pkg.Stream = comp
	dec, done, err := r.open(payload, comp)
	if err != nil {
		return r.streamErr("", fmt.Errorf("payload: %w", err), "")
	}
	defer done()
	if err := r.cpio(dec, comp); err != nil {
		return err
	}
	return r.trailer(dec, comp, "")
}

// maxRPMString bounds the string tags read (a compressor's name).
const maxRPMString = 4096

// rpmHeader reads a header structure at off: its string tags, and the
// offset after it. Counts and sizes are checked against the package; only
// the index and the strings asked for are read.
func (r *reader) rpmHeader(src *io.SectionReader, off int64, what string) (map[int]string, int64, error) {
	size := src.Size()
	if size-off < 16 {
		return nil, 0, r.fail("", "truncated in the %s at offset %d", what, off)
	}
	var hb [16]byte
	if _, err := src.ReadAt(hb[:], off); err != nil {
		return nil, 0, r.fail("", "cannot read the %s: %w", what, err)
	}
	if !bytes.Equal(hb[:4], rpmHeaderMagic) {
		return nil, 0, r.fail("", "no %s magic at offset %d", what, off)
	}
	n := binary.BigEndian.Uint32(hb[8:])
	dsize := binary.BigEndian.Uint32(hb[12:])
	if n > maxHeaderEntries {
		return nil, 0, r.fail("", "the %s declares %d entries, more than %d", what, n, maxHeaderEntries)
	}
	index := off + 16
	store := index + 16*int64(n)
	end := store + int64(dsize)
	if end > size {
		return nil, 0, r.fail("", "the %s declares %d entries and %d bytes of data, past the package's end (truncated)", what, n, dsize)
	}
	entries := make([]byte, 16*int(n))
	if _, err := src.ReadAt(entries, index); err != nil {
		return nil, 0, r.fail("", "cannot read the %s: %w", what, err)
	}
	tags := map[int]string{}
	for i := 0; i < int(n); i++ {
		e := entries[16*i:]
		tag := int(binary.BigEndian.Uint32(e))
		typ := binary.BigEndian.Uint32(e[4:])
		at := binary.BigEndian.Uint32(e[8:])
		if typ != typeString || (tag != tagPayloadFormat && tag != tagPayloadCompressor) {
			continue
		}
		if at >= dsize {
			return nil, 0, r.fail("", "the %s's tag %d points past its data", what, tag)
		}
		s := make([]byte, min(int64(maxRPMString), int64(dsize-at)))
		if _, err := src.ReadAt(s, store+int64(at)); err != nil {
			return nil, 0, r.fail("", "cannot read the %s: %w", what, err)
		}
		z := bytes.IndexByte(s, 0)
		if z < 0 {
			return nil, 0, r.fail("", "the %s's tag %d is a string without its end", what, tag)
		}
		tags[tag] = string(s[:z])
	}
	return tags, end, nil
}

// maxCpioName bounds a cpio member's name (PATH_MAX).
const maxCpioName = 4096

// cpio reads a cpio archive in the "newc" form rpm writes (070701, or
// 070702 with a checksum) to its TRAILER!!! entry.
func (r *reader) cpio(src io.Reader, kind string) error {
	var hdr [110]byte
	last := ""
	for n := 0; ; n++ {
		if _, err := io.ReadFull(src, hdr[:]); err != nil {
			err = integrity(kind, unexpected(err))
			if n == 0 {
				return r.streamErr("", err, "the payload ends before its first cpio header (truncated)")
			}
			return r.streamErr(last, err, "the payload ends after this member without a TRAILER!!! entry (truncated)")
		}
		magic := string(hdr[:6])
		if magic != "070701" && magic != "070702" {
			if n == 0 {
				return r.fail("", "payload is not a newc cpio archive (starts with %q)", magic)
			}
			return r.fail(last, "after this member comes no cpio header (a member larger than its header declares, or a corrupt archive)")
		}
		field := func(i int) (int64, bool) {
			v, err := strconv.ParseUint(string(hdr[6+8*i:14+8*i]), 16, 32)
			return int64(v), err == nil
		}
		mode, ok1 := field(1)
		size, ok2 := field(6)
		nameLen, ok3 := field(11)
		if !ok1 || !ok2 || !ok3 {
			return r.fail(last, "the cpio header after this member has a field that is not hex")
		}
		if nameLen < 1 || nameLen > maxCpioName {
			return r.fail(last, "the cpio header after this member declares a %d-byte name (1 to %d allowed)", nameLen, maxCpioName)
		}
		nb := make([]byte, nameLen+pad4(110+nameLen))
		if _, err := io.ReadFull(src, nb); err != nil {
			return r.streamErr(last, integrity(kind, err), "the payload ends inside a cpio header (truncated)")
		}
		name := string(bytes.TrimRight(nb[:nameLen], "\x00"))
		if name == "TRAILER!!!" {
			return nil
		}
		last = name
		var body []byte
		var elf bool
		var err error
		if mode&0o170000 == 0o100000 {
			body, elf, err = r.body(src, size, true)
		} else {
			// A symlink's body is its target: a name, never followed.
			_, err = io.CopyN(io.Discard, src, size)
			err = unexpected(err)
		}
		if err != nil {
			return r.streamErr(name, integrity(kind, err), "the payload ends inside this member (a member smaller than its header declares, or a truncated archive)")
		}
		if _, err := io.CopyN(io.Discard, src, pad4(size)); err != nil {
			return r.streamErr(name, integrity(kind, unexpected(err)), "the payload ends inside this member's padding (truncated)")
		}
		// A hard-linked file's data comes with its last link; the others
		// have no data and are no member here.
		if mode&0o170000 == 0o100000 && size > 0 {
			if err := r.file(name, body, elf); err != nil {
				return err
			}
		}
	}
}

func pad4(n int64) int64 { return (4 - n%4) % 4 }
