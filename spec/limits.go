package spec

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"sort"
	"sync"

	"github.com/nrtabi/nrtabi/internal/regfile"
)

// Limits on one spec file, checked before the TOML decoder sees it: the
// decoder's cost grows with nesting faster than with size (10 000 nested
// inline tables take gigabytes), and a release never needs more than a
// few levels or more than a few hundred kilobytes. A fragment nrtabi
// extract --all writes of a large object does: the Linux kernel's vmlinux
// (7,155 structs) is 7.5 MB, which the loader reads and validates in
// 1.6 s and 255 MB (docs/nrtabi-extract.md#never-a-file-the-loader-refuses).
const (
	// MaxSpecFileSize is the largest *.toml file the loader reads.
	MaxSpecFileSize = 16 << 20
	// MaxNesting is how deeply arrays and inline tables may nest in a value.
	MaxNesting = 32
	// MaxSpecDirSize bounds the *.toml bytes one load reads: the release's
	// directory and every release it derives from together. A release is a
	// few hundred kilobytes; twenty files of 4 MiB once took 2.9 GB and
	// 23 s to refuse, so this bound is two of the largest files.
	MaxSpecDirSize = 2 * MaxSpecFileSize
	// MaxSpecDirFiles bounds the *.toml files of one load, all layers.
	MaxSpecDirFiles = 256
	// MaxSpecDirEntries bounds the entries of one spec directory listed
	// (any kind), so a directory of millions of names is refused unread.
	MaxSpecDirEntries = 4096
)

// budget is what one load has read so far, across its layers.
type budget struct {
	files int
	bytes int64
}

// withBudget makes the parents locate finds share b.
func withBudget(locate func(string) (source, error), b *budget) func(string) (source, error) {
	return func(name string) (source, error) {
		src, err := locate(name)
		src.budget = b
		return src, err
	}
}

// file counts one more spec file of dir and refuses the directory, before
// any file is read, when the files so far would pass a bound; listed sums
// the sizes the directory lists (add checks what is then read).
func (b *budget) file(dir string, e fs.DirEntry, listed *int64) error {
	if b.files++; b.files > MaxSpecDirFiles {
		return fmt.Errorf("spec directory %s: more than %d *.toml files in the release and the releases it derives from (MaxSpecDirFiles); merge files or remove stray ones", dir, MaxSpecDirFiles)
	}
	if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
		if *listed += info.Size(); b.bytes+*listed > MaxSpecDirSize {
			return b.tooLarge(dir)
		}
	}
	return nil
}

func (b *budget) add(dir string, n int64) error {
	if b.bytes += n; b.bytes > MaxSpecDirSize {
		return b.tooLarge(dir)
	}
	return nil
}

func (b *budget) tooLarge(dir string) error {
	return fmt.Errorf("spec directory %s: its *.toml files, with those of the releases it derives from, hold more than %d bytes (MaxSpecDirSize); a release needs a few hundred kilobytes", dir, MaxSpecDirSize)
}

// readDirBounded lists dir sorted by name, as fs.ReadDir does, reading at
// most MaxSpecDirEntries entries.
func readDirBounded(fsys fs.FS, dir, display string) ([]fs.DirEntry, error) {
	f, err := fsys.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("read spec directory %s: %w", display, err)
	}
	defer f.Close()
	rd, ok := f.(fs.ReadDirFile)
	if !ok {
		return nil, fmt.Errorf("read spec directory %s: not a directory", display)
	}
	entries, err := rd.ReadDir(MaxSpecDirEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read spec directory %s: %w", display, err)
	}
	if len(entries) > MaxSpecDirEntries {
		return nil, fmt.Errorf("spec directory %s: more than %d entries (MaxSpecDirEntries); a release directory holds a few *.toml files", display, MaxSpecDirEntries)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	return entries, nil
}

// readSpecFile reads one spec file: a regular file (a FIFO, device or
// directory is refused before it is opened, so it can never block) of at
// most MaxSpecFileSize bytes.
func readSpecFile(fsys fs.FS, name, display string) ([]byte, error) {
	data, err := regfile.ReadFS(fsys, name, MaxSpecFileSize)
	var notReg *regfile.NotRegularError
	var tooLarge *regfile.TooLargeError
	switch {
	case errors.As(err, &notReg):
		return nil, fmt.Errorf("read %s: not a regular file (%s); a spec file must be a plain *.toml file", display, notReg.Mode.Type())
	case errors.As(err, &tooLarge) && tooLarge.Size >= 0:
		return nil, fmt.Errorf("read %s: %d bytes; a spec file holds at most %d (split the release into more files)", display, tooLarge.Size, MaxSpecFileSize)
	case errors.As(err, &tooLarge):
		return nil, fmt.Errorf("read %s: more than %d bytes; a spec file holds at most %d (split the release into more files)", display, MaxSpecFileSize, MaxSpecFileSize)
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", display, err)
	}
	return data, nil
}

// checkNesting finds the first place where arrays and inline tables nest
// deeper than MaxNesting, skipping strings and comments, in one pass.
func checkNesting(file, src string) *Error {
	depth, line, col := 0, 1, 1
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '\n':
			line, col = line+1, 1
			continue
		case '#':
			for i+1 < len(src) && src[i+1] != '\n' {
				i++
			}
		case '"', '\'':
			end, nl, lastCol := skipTOMLString(src, i)
			if nl > 0 {
				line += nl
				col = lastCol
			} else {
				col += runeCount(src[i:end])
			}
			i = end - 1
			continue
		case '[', '{':
			if depth++; depth > MaxNesting {
				return &Error{Pos: Pos{File: file, Line: line, Col: col}, Rule: "syntax",
					Msg: fmt.Sprintf("arrays and inline tables nest more than %d deep here; flatten the value", MaxNesting)}
			}
		case ']', '}':
			depth = max(depth-1, 0)
		}
		if c&0xc0 != 0x80 {
			col++
		}
	}
	return nil
}

// skipTOMLString returns the end of the string starting at i, the newlines
// it spans and the column after it when it spans any.
func skipTOMLString(src string, i int) (end, newlines, col int) {
	q := src[i]
	j := i + 1
	multi := len(src) >= i+3 && src[i+1] == q && src[i+2] == q
	if multi {
		j = i + 3
	}
	col = 1
	for j < len(src) {
		c := src[j]
		switch {
		case c == '\\' && q == '"':
			j += 2
			col += 2
			continue
		case c == '\n':
			if !multi {
				return j, newlines, col
			}
			newlines++
			col = 1
			j++
			continue
		case c == q:
			if !multi {
				return j + 1, newlines, col + 1
			}
			if len(src) >= j+3 && src[j+1] == q && src[j+2] == q {
				return j + 3, newlines, col + 3
			}
		}
		if c&0xc0 != 0x80 {
			col++
		}
		j++
	}
	return len(src), newlines, col
}

func runeCount(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i]&0xc0 != 0x80 {
			n++
		}
	}
	return n
}

// lazyRE compiles a pattern on first use: a command that reads a compiled
// release never validates TOML, so it should not pay for the compile.
func lazyRE(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}
