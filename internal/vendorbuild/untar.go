package vendorbuild

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/nrtabi/nrtabi/internal/esc"
)

// The bounds of one tarball: the vendor tarballs unpack to well under
// 100 MiB and 10,000 entries.
const (
	maxUnpacked = 1 << 30
	maxEntries  = 200_000
)

// untar unpacks the gzip'd tarball r (named name, for errors) under dir:
// directories, regular files and symlinks that stay inside dir; anything
// else, or a path that leaves dir, is refused by name.
func untar(r io.Reader, dir, name string) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("%s: not a gzip stream: %w", name, err)
	}
	tr := tar.NewReader(zr)
	var total int64
	for n := 0; ; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if n >= maxEntries {
			return fmt.Errorf("%s: more than %d entries", name, maxEntries)
		}
		rel := filepath.Clean(h.Name)
		if filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
			return fmt.Errorf("%s: entry %s leaves the directory", name, esc.String(h.Name))
		}
		path := filepath.Join(dir, rel)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			total += h.Size
			if total > maxUnpacked {
				return fmt.Errorf("%s: unpacks to more than %d bytes", name, maxUnpacked)
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, os.FileMode(h.Mode&0o755)|0o600)
			if err != nil {
				return err
			}
			if _, err := io.CopyN(f, tr, h.Size); err != nil {
				f.Close()
				return fmt.Errorf("%s: %s: %w", name, esc.String(h.Name), err)
			}
			if err := f.Close(); err != nil {
				return err
			}
		case tar.TypeSymlink:
			target := filepath.Join(filepath.Dir(rel), h.Linkname)
			if filepath.IsAbs(h.Linkname) || target == ".." || strings.HasPrefix(target, "../") {
				return fmt.Errorf("%s: symlink %s -> %s leaves the directory", name, esc.String(h.Name), esc.String(h.Linkname))
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(h.Linkname, path); err != nil {
				return err
			}
		case tar.TypeXGlobalHeader:
			// pax comments (git archive's commit id): nothing to unpack
		default:
			return fmt.Errorf("%s: entry %s is of tar type %q, which is not unpacked", name, esc.String(h.Name), h.Typeflag)
		}
	}
}
