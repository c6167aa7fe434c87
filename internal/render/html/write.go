package html

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// IndexName is the page's file in the directory it is written to.
const IndexName = "index.html"

// Write renders p to w.
func Write(w io.Writer, p Page) error {
	var b bytes.Buffer
	if err := pageTemplate().Execute(&b, build(p)); err != nil {
		return err
	}
	// The template's own definitions end in line breaks: one ends the page.
	_, err := w.Write(append(bytes.TrimRight(b.Bytes(), "\n"), '\n'))
	return err
}

// WriteDir writes p as dir/index.html, creating dir if it is missing. The
// page is rendered whole first, then written to a temporary file in dir and
// renamed over index.html: a failed write leaves the old page in place,
// never part of a new one. What stands at index.html, if anything, must be
// a regular file or a symlink (which is replaced, not followed).
func WriteDir(dir string, p Page) (string, error) {
	var b bytes.Buffer
	if err := Write(&b, p); err != nil {
		return "", fmt.Errorf("rendering the page: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if st, err := os.Stat(dir); err != nil {
		return "", err
	} else if !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	path := filepath.Join(dir, IndexName)
	if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() && st.Mode()&os.ModeSymlink == 0 {
		return "", fmt.Errorf("%s is not a regular file: remove it or choose another directory", path)
	}
	tmp, err := os.CreateTemp(dir, ".index-*.html")
	if err != nil {
		return "", err
	}
	if _, err := tmp.Write(b.Bytes()); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return path, nil
}
