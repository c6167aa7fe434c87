package pkgfile

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// tarball reads a tar archive, compressed or not, from data: a plain
// .tar.*, or a .deb's data.tar.* (in is then that member's name, for
// errors). Only regular files are read; links, devices and directories are
// names only.
func (r *reader) tarball(data []byte, in string) error {
	kind := compression(data)
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
	src, done, err := r.open(data, kind)
	if err != nil {
		return r.streamErr(where(""), fmt.Errorf("%s stream: %w", kind, err), "")
	}
	defer done()
	tr := tar.NewReader(src)
	last := ""
	for n := 0; ; n++ {
		h, err := tr.Next()
		if err == io.EOF && n > 0 {
			return nil
		}
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
			// The frame asks for more memory than the package's bound
			// (or a window past maxWindow): a bound reached, not "no tar".
			err = errBound
		}
		if n == 0 && err != nil && !errors.Is(err, errBound) {
			// Not a tar at all: a compressed file of something else.
			return r.fail(where(""), "a %s stream that holds no tar archive: %w", kind, ErrNotPackage)
		}
		if err != nil {
			return r.streamErr(where(last), err, "after this member the next tar header is unreadable (a member larger than its header declares, or a truncated archive)")
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
		// what the archive stores of it: a sparse member's holes are
		// never made (a 1 TiB hole would be a time bomb).
		b, err := r.body(tr, h.Size, false)
		if err != nil {
			return r.streamErr(where(h.Name), err, "the archive ends inside this member (a member smaller than its header declares, or a truncated archive)")
		}
		if err := r.file(h.Name, b); err != nil {
			return err
		}
	}
}

// body reads a member of size bytes: its first bytes decide whether it is
// ELF; with drain, the rest of a non-ELF member is read through (it counts
// against the bound) and dropped, else left unread.
func (r *reader) body(src io.Reader, size int64, drain bool) ([]byte, error) {
	var head [4]byte
	n, err := io.ReadFull(src, head[:min(size, 4)])
	if err != nil {
		return nil, unexpected(err)
	}
	if n < 4 || string(head[:]) != "\x7fELF" {
		if !drain {
			return nil, nil
		}
		if _, err := io.CopyN(io.Discard, src, size-int64(n)); err != nil {
			return nil, unexpected(err)
		}
		return nil, nil
	}
	if size > r.budget+int64(n) {
		return nil, errBound
	}
	b := make([]byte, size)
	copy(b, head[:])
	if _, err := io.ReadFull(src, b[4:]); err != nil {
		return nil, unexpected(err)
	}
	return b, nil
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
	switch {
	case errors.Is(err, errBound):
		return r.fail(member, "%s", r.boundMsg())
	case errors.Is(err, io.ErrUnexpectedEOF) && truncated != "":
		return r.fail(member, "%s", truncated)
	case errors.Is(err, tar.ErrHeader):
		return r.fail(member, "%s", "after this member comes no valid tar header (a member larger than its header declares, or a corrupt archive)")
	}
	return r.fail(member, "%v", err)
}
