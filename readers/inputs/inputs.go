// Package inputs turns the arguments of a check, show or extract run into
// the list of ELF inputs it reads: files as named, directories walked in a
// deterministic order with ELF files recognised by their magic, and (through
// an Expander) archives and packages whose ELF members are read in memory.
// What a walk meets and does not read is kept as a skipped Input with its
// reason, or refused, as the caller chooses (docs/nrtabi-check.md#many-inputs).
package inputs

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/nrtabi/nrtabi/internal/regfile"
	"github.com/nrtabi/nrtabi/readers/elfread"
)

// Input is one ELF input of a run: a file on disk (Path) or a member read
// in memory (Mem), or an entry the walk skipped (Skip).
type Input struct {
	// Name is what reports and errors call the input: the path as given
	// or as walked ("lib/libnrt.so.1"), or for an archive member the
	// archive and the member's name ("pkg.deb!/usr/lib/libnrt.so.1").
	Name string
	// Path is the file on disk, opened (mapped) by elfread.Open; "" for a
	// member read in memory.
	Path string
	// Mem holds a member's bytes when Path is "" (a *bytes.Reader or an
	// *io.SectionReader: elfread.NewFile reads its Size).
	Mem io.ReaderAt
	// Debug, when set, completes the debug lookup for this input: a debug
	// package given beside its package answers by build-id in memory. It
	// is called on a copy of the run's lookup, once per input.
	Debug func(*elfread.Lookup)
	// Skip, when not "", is why this entry is listed and not read: "not an
	// ELF file (starts with ...)", "cannot open: permission denied",
	// "symbolic link out of DIR, not followed". Only a walk (or an
	// Expander) makes skipped entries; a file named on the command line is
	// always read, and fails as an input error if it is no ELF file.
	Skip string
	// Fail marks a skipped entry that --non-elf fail refuses (a non-ELF
	// or unreadable file); a symbolic link not followed is only listed.
	Fail bool
}

// Open opens the input's ELF file: mapped from disk, or read from memory.
// Errors are *elfread.InputError naming the input by Name.
func (in Input) Open() (*elfread.File, error) {
	if in.Skip != "" {
		return nil, elfread.InputErrorf(in.Name, "%s", in.Skip)
	}
	if in.Path != "" {
		f, err := elfread.Open(in.Path)
		var ie *elfread.InputError
		if err != nil && in.Name != in.Path && errors.As(err, &ie) && ie.Path == in.Path {
			// A walked link is named as walked, not by its target.
			return nil, &elfread.InputError{Path: in.Name, Msg: ie.Msg, Err: ie.Err}
		}
		return f, err
	}
	if in.Mem == nil {
		return nil, elfread.InputErrorf(in.Name, "no file and no bytes to read (an inputs.Input must have Path or Mem)")
	}
	if l, ok := in.Mem.(interface{ Load() ([]byte, error) }); ok {
		// A package member (readers/pkgfile): its bytes are read
		// now, from the package, and dropped when the file is.
		b, err := l.Load()
		if err != nil {
			return nil, err
		}
		return elfread.NewMemFile(in.Name, b)
	}
	if b, ok := in.Mem.(interface{ Bytes() []byte }); ok {
		// Bytes held in memory: read in place, named.
		return elfread.NewMemFile(in.Name, b.Bytes())
	}
	f, err := elfread.NewFile(in.Mem)
	if err != nil {
		var ie *elfread.InputError
		if errors.As(err, &ie) && ie.Path == "" {
			return nil, &elfread.InputError{Path: in.Name, Msg: ie.Msg, Err: ie.Err}
		}
		return nil, err
	}
	return f, nil
}

// Lookup returns the debug lookup for this input: lk completed by Debug.
func (in Input) Lookup(lk elfread.Lookup) elfread.Lookup {
	if in.Debug != nil {
		in.Debug(&lk)
	}
	return lk
}

// The choices of --non-elf.
const (
	NonELFSkip = "skip" // list the entry as skipped, with its reason, and go on
	NonELFFail = "fail" // refuse the run, naming the entry
)

// Expander reads a regular file the walk or the command line names that is
// not an ELF file, and returns its ELF members as in-memory Inputs (ok
// true), or ok false when it is no archive it knows. head is the file's
// first bytes (up to HeadSize), for recognising it by its magic.
type Expander func(path string, head []byte) (members []Input, ok bool, err error)

// HeadSize is how many bytes of a file an Expander sees: enough for the
// magic of an ar archive, an rpm lead, a compressed stream or a tar header.
const HeadSize = 512

// Options control an expansion.
type Options struct {
	NonELF string // NonELFSkip (the default when "") or NonELFFail
	// Expand, when set, is asked about every non-ELF regular file before it
	// is skipped or refused (package 28P's archives and packages).
	Expand Expander
}

// Bounds of a walk: a tree deeper or larger than these is refused by name
// rather than walked without end (house rule: recursion bounded).
const (
	MaxDepth   = 64
	MaxEntries = 1 << 20
)

// Expand turns the arguments into inputs, in argument order; a directory's
// entries follow in the order of their names (bytes), depth first. A file
// named as an argument is an input as it is (its errors come when it is
// read), unless an Expander takes it; a directory is walked: regular files
// whose first bytes are ELF's magic are inputs, symbolic links are followed
// only to regular files inside the tree given (a link to a directory, out
// of the tree, dangling or in a loop is not followed), and everything else
// is a skipped entry or, under NonELFFail, an *elfread.InputError naming
// it (as every error here is).
func Expand(args []string, opt Options) ([]Input, error) {
	if opt.NonELF == "" {
		opt.NonELF = NonELFSkip
	}
	if opt.NonELF != NonELFSkip && opt.NonELF != NonELFFail {
		return nil, fmt.Errorf("--non-elf %q: use skip or fail", opt.NonELF)
	}
	w := &walker{opt: opt}
	for _, a := range args {
		st, err := os.Stat(a)
		if err == nil && st.IsDir() {
			root, err := filepath.EvalSymlinks(a)
			if err != nil {
				return nil, elfread.InputErrorf(a, "cannot resolve the directory: %w", err)
			}
			if root, err = filepath.Abs(root); err != nil {
				return nil, elfread.InputErrorf(a, "%w", err)
			}
			if err := w.dir(a, root, root, 0); err != nil {
				return nil, err
			}
			continue
		}
		if err := w.arg(a); err != nil {
			return nil, err
		}
	}
	return w.out, nil
}

type walker struct {
	opt  Options
	out  []Input
	n    int
	seen map[fileID]string // the name each file was first read by
}

// fileID is a file's device and inode: two names of one file (a symbolic
// link and its target, a hard link) have one.
type fileID struct{ dev, ino uint64 }

// again reports the name the file at path was first read by, when another
// name reached it before (docs/nrtabi-check.md#many-inputs): the file is
// read once, and the later name is listed as that file.
func (w *walker) again(name, path string) (string, bool) {
	st, err := os.Stat(path)
	if err != nil {
		return "", false // its reader names the problem
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	id := fileID{uint64(sys.Dev), uint64(sys.Ino)}
	if first, ok := w.seen[id]; ok {
		return first, true
	}
	if w.seen == nil {
		w.seen = map[fileID]string{}
	}
	w.seen[id] = name
	return "", false
}

// sameAs is the skipped entry of a file reached again by another name.
func sameAs(name, first string) Input {
	return Input{Name: name, Skip: "the same file as " + first + " (one device and inode), read once"}
}

func (w *walker) add(in Input) error {
	if w.n++; w.n > MaxEntries {
		return elfread.InputErrorf(in.Name, "more than %d entries in the trees given; name fewer or smaller directories", MaxEntries)
	}
	if in.Skip != "" && in.Fail && w.opt.NonELF == NonELFFail {
		return elfread.InputErrorf(in.Name, "%s; remove it, or pass --non-elf skip to list it as not read and go on", in.Skip)
	}
	w.out = append(w.out, in)
	return nil
}

// arg is a file named on the command line: read as it is, unless an
// Expander recognises it as an archive.
func (w *walker) arg(path string) error {
	if first, ok := w.again(path, path); ok {
		return w.add(sameAs(path, first))
	}
	if w.opt.Expand != nil {
		if head, err := readHead(path); err == nil && !isELF(head) {
			if ok, err := w.expand(path, head); ok || err != nil {
				return err
			}
		}
	}
	return w.add(Input{Name: path, Path: path})
}

// expand adds the members of the archive at path when the Expander takes
// it, and says whether it did.
func (w *walker) expand(path string, head []byte) (bool, error) {
	members, ok, err := w.opt.Expand(path, head)
	if err != nil || !ok {
		return ok, err
	}
	for _, m := range members {
		if err := w.add(m); err != nil {
			return true, err
		}
	}
	return true, nil
}

// dir walks name (whose real path is real) at the given depth below the
// tree's root, the real path of the directory named on the command line.
func (w *walker) dir(name, real, root string, depth int) error {
	if depth > MaxDepth {
		return elfread.InputErrorf(name, "directories nested more than %d deep; name a shallower directory", MaxDepth)
	}
	ents, err := os.ReadDir(name) // sorted by name
	if err != nil {
		return w.add(Input{Name: name, Skip: "cannot read the directory: " + errText(err), Fail: true})
	}
	for _, e := range ents {
		p := filepath.Join(name, e.Name())
		rp := filepath.Join(real, e.Name())
		switch t := e.Type(); {
		case t.IsDir():
			if err := w.dir(p, rp, root, depth+1); err != nil {
				return err
			}
		case t&os.ModeSymlink != 0:
			if err := w.link(p, root); err != nil {
				return err
			}
		case t.IsRegular():
			if err := w.file(p, p); err != nil {
				return err
			}
		default:
			what := (&regfile.NotRegularError{Mode: t}).What()
			if err := w.add(Input{Name: p, Skip: "is " + what, Fail: true}); err != nil {
				return err
			}
		}
	}
	return nil
}

// link follows a symbolic link met in a walk only to a regular file inside
// the tree; it is never followed to a directory, so no walk loops.
func (w *walker) link(p, root string) error {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		why := "dangling symbolic link, not followed"
		if errors.Is(err, syscall.ELOOP) || strings.Contains(err.Error(), "too many links") {
			why = "symbolic link loop, not followed"
		}
		return w.add(Input{Name: p, Skip: why, Fail: true})
	}
	abs, err := filepath.Abs(target)
	if err != nil {
		return w.add(Input{Name: p, Skip: "cannot resolve the symbolic link: " + errText(err), Fail: true})
	}
	if !under(abs, root) {
		return w.add(Input{Name: p, Skip: "symbolic link out of " + root + ", not followed"})
	}
	st, err := os.Stat(abs)
	switch {
	case err != nil:
		return w.add(Input{Name: p, Skip: "cannot stat the link's target: " + errText(err), Fail: true})
	case st.IsDir():
		return w.add(Input{Name: p, Skip: "symbolic link to a directory of the tree, not followed"})
	case !st.Mode().IsRegular():
		return w.add(Input{Name: p, Skip: "symbolic link to something that " + strings.TrimPrefix((&regfile.NotRegularError{Mode: st.Mode()}).What(), "a "), Fail: true})
	}
	return w.file(p, abs)
}

// file is a regular file met in a walk (path, opened as open): an input if
// its first bytes are ELF's magic, an Expander's members if it takes it,
// else skipped as not an ELF file.
func (w *walker) file(p, open string) error {
	head, err := readHead(open)
	if err != nil {
		return w.add(Input{Name: p, Skip: "cannot read: " + errText(err), Fail: true})
	}
	if first, ok := w.again(p, open); ok {
		return w.add(sameAs(p, first))
	}
	if isELF(head) {
		return w.add(Input{Name: p, Path: open})
	}
	if w.opt.Expand != nil {
		if ok, err := w.expand(open, head); ok || err != nil {
			return err
		}
	}
	return w.add(Input{Name: p, Skip: fmt.Sprintf("not an ELF file (starts with \"%s\")", printable(head)), Fail: true})
}

func isELF(head []byte) bool { return bytes.HasPrefix(head, []byte(elf.ELFMAG)) }

// readHead reads the first HeadSize bytes of a regular file, never blocking
// on a FIFO or a device (regfile).
func readHead(path string) ([]byte, error) {
	f, _, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, HeadSize)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:n], nil
}

func under(p, root string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

func errText(err error) string {
	var nr *regfile.NotRegularError
	if errors.As(err, &nr) {
		return "is " + nr.What()
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// printable is the first bytes as elfread shows them: a byte that is not
// printable ASCII is a dot, so the reason needs no escaping of its own.
func printable(b []byte) string {
	out := make([]byte, min(len(b), 4))
	for i := range out {
		out[i] = b[i]
		if b[i] < 32 || b[i] > 126 {
			out[i] = '.'
		}
	}
	return string(out)
}
