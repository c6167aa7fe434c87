package pkgfile

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// tarball reads a tar archive, compressed or not, from src: a plain
// .tar.*, or a .deb's data.tar.* (in is then that member's name, for
// errors). Only regular files are read; links, devices and directories are
// names only. After the tar's end marker the stream is read to its end, so
// that its own integrity check (gzip's CRC-32 and ISIZE trailer, xz's
// block checks, zstd's content checksum, bzip2's CRCs) is enforced, not
// skipped because the archive ended first.
func (r *reader) tarball(src *io.SectionReader, in string) error {
	var head [6]byte
	n, _ := src.ReadAt(head[:], 0)
	kind := compression(head[:n])
	if kind == "" {
		kind = "none"
	}
	if r.pkg.Stream == "" {
		r.pkg.Stream = kind
	}
	where := func(m string) string {
		if in == "" {
			return m
		}
		if m == "" {
			return in
		}
		return in + "!" + m
	}
	dec, done, err := r.open(src, kind)
	if err != nil {
		return r.streamErr(where(""), fmt.Errorf("%s stream: %w", kind, err), "")
	}
	defer done()
	tr := tar.NewReader(dec)
	last := ""
	for n := 0; ; n++ {
		h, err := tr.Next()
		if err == io.EOF && n > 0 {
			return r.trailer(dec, kind, where(""))
		}
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
			// The frame asks for more memory than the package's bound
			// (or a window past maxWindow): a bound reached, not "no tar".
			err = errBound
		}
		if n == 0 && err != nil && !errors.Is(err, errBound) {
			if ce := corrupt(kind, err); ce != nil {
				return r.fail(where(""), "%v", ce)
			}
			// Not a tar at all: a compressed file of something else.
			return r.fail(where(""), "a %s stream that holds no tar archive: %w", kind, ErrNotPackage)
		}
		if err != nil {
			return r.streamErr(where(last), integrity(kind, err), "after this member the next tar header is unreadable (a member larger than its header declares, or a truncated archive)")
		}
		last = h.Name
		switch h.Typeflag {
		case tar.TypeReg, '\x00': // '0', and the old form of a regular file
		default:
			// A symlink or hard link is a name here: its target is not
			// followed, inside the archive or out of it; the regular
			// file it names is read where it is stored.
			continue
		}
		if h.Size < 0 {
			return r.fail(where(h.Name), "declares a negative size")
		}
		// The rest of a non-ELF member is left to tr.Next, which skips
		// what the archive stores of it (seeking over it when the tar is
		// not compressed): a sparse member's holes are never made (a
		// 1 TiB hole would be a time bomb).
		b, elf, err := r.body(tr, h.Size, false)
		if err != nil {
			return r.streamErr(where(h.Name), integrity(kind, err), "the archive ends inside this member (a member smaller than its header declares, or a truncated archive)")
		}
		if err := r.file(h.Name, b, elf); err != nil {
			return err
		}
	}
}

// trailer reads a stream to its end once the archive in it has ended, so
// the compression's own check runs; what follows the archive is the tar's
// zero padding and, for gzip, further members, all checked the same way.
func (r *reader) trailer(dec io.Reader, kind, where string) error {
	if kind == "none" {
		return nil // no check of its own; the tar's own padding is not read
	}
	if _, err := io.Copy(io.Discard, dec); err != nil {
		return r.streamErr(where, integrity(kind, err), "the "+kind+" stream ends before its trailer (truncated)")
	}
	return nil
}

// body reads a member of size bytes: its first bytes decide whether it is
// ELF (elf). An ELF member's bytes are read unless a load wants another
// member; with drain, the rest of a member not read is read through (it
// counts against the bound) and dropped, else left unread.
func (r *reader) body(src io.Reader, size int64, drain bool) ([]byte, bool, error) {
	var head [16]byte
	n, err := io.ReadFull(src, head[:min(size, 16)])
	if err != nil {
		return nil, false, unexpected(err)
	}
	elf := n == 16 && isELF(head[:])
	if !elf || r.skipELF() {
		if drain {
			if _, err := io.CopyN(io.Discard, src, size-int64(n)); err != nil {
				return nil, false, unexpected(err)
			}
		}
		return nil, elf, nil
	}
	if size > r.budget+int64(n) {
		return nil, false, errBound
	}
	b := make([]byte, size)
	copy(b, head[:])
	if _, err := io.ReadFull(src, b[n:]); err != nil {
		return nil, false, unexpected(err)
	}
	return b, true, nil
}

// unexpected makes an early end of a member an io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// streamErr is a failed read of a member: the bound, a truncation, or a
// corrupt stream, each said so.
func (r *reader) streamErr(member string, err error, truncated string) error {
	var ie *integrityError
	switch {
	case errors.Is(err, errBound):
		return r.fail(member, "%s", r.boundMsg())
	case errors.As(err, &ie):
		return r.fail(member, "%v", err)
	case errors.Is(err, io.ErrUnexpectedEOF) && truncated != "":
		return r.fail(member, "%s", truncated)
	case errors.Is(err, tar.ErrHeader):
		return r.fail(member, "%s", "after this member comes no valid tar header (a member larger than its header declares, or a corrupt archive)")
	}
	return r.fail(member, "%v", err)
}
