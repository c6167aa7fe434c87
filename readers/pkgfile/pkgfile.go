package pkgfile

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nrtabi/nrtabi/internal/regfile"
	"github.com/nrtabi/nrtabi/readers/elfread"
)

// Formats, as Package.Format names them.
const (
	Deb = "deb"
	RPM = "rpm"
	Tar = "tar"
	// Ar is an ar archive that is no .deb: a static library, whose ELF
	// members (object files) are inputs named LIB.a!member.o.
	Ar = "ar"
)

// MaxPackage bounds the size of a package file. A package is streamed,
// never read into memory whole (docs/packages.md#memory), so this bounds
// the time a read takes, not the memory.
const MaxPackage = 64 << 30

// The decompression bound (docs/packages.md#bounds): all the streams of one
// package together may decompress to at most Ratio times the package's size
// plus Floor bytes. Floor lets small archives of small files through (a tar
// pads to 10 KiB records that compress to almost nothing); Ratio is well
// above what xz or zstd reach on real binaries and their DWARF (4–12×).
const (
	Ratio = 64
	Floor = 64 << 20
)

// floor is Floor; TestBomb lowers it so that a bomb past the bound is a
// 16 MiB of zeros, not 80 MiB compressed three ways under the race
// detector.
var floor int64 = Floor

// Limit is the decompressed bytes a package of n bytes may yield.
func Limit(n int64) int64 { return floor + Ratio*n }

// DebugDir is where packages install separate debug files; members under it
// are debug files, not inputs.
const DebugDir = "/usr/lib/debug/"

// Member is one ELF file inside a package. Its bytes are not kept: the
// package is read again, as a stream, when they are asked for (Load), so a
// run's packages never stay in memory (docs/packages.md#memory).
type Member struct {
	// Name is the member's path inside the package as the archive stores
	// it, with a leading "./" taken off and a "/" put in front: a name
	// only, never a path on this machine (it may hold ".."). A static
	// library's member is named as ar stores it ("member.o").
	Name string
	Size int64
	// BuildID is the member's own build-id note ("" when it has none):
	// the debug lookup's key, read once while the package was indexed.
	BuildID string
	crc     uint32 // of the bytes, to know a later read got the same ones
	ord     int    // the member's place among the package's ELF members
	at      int64  // where a stored (not compressed) member starts in the file, or -1
	kept    []byte // the bytes of a small member, kept (see keepMember)
	pkg     *Package
}

// A small ELF member's bytes are kept from the indexing pass, so reading it
// again costs no second decompression of what precedes it (a library
// stored after a large payload): members of at most keepMember bytes, at
// most keepTotal bytes in all in the process, whatever the number or the
// size of the packages (docs/packages.md#memory).
const (
	keepMember = 4 << 20
	keepTotal  = 64 << 20
)

// keptBytes is what kept holds in the process.
var keptBytes atomic.Int64

// Debug reports whether the member is a separate debug file.
func (m Member) Debug() bool { return strings.HasPrefix(m.Name, DebugDir) }

// Load reads the member's bytes: the package is streamed again up to the
// member (a static library's member is read in place). The bytes are the
// caller's; nothing here keeps them. A package that changed since it was
// indexed is refused by name.
func (m Member) Load() ([]byte, error) {
	if m.pkg == nil {
		return nil, errors.New("a pkgfile.Member not made by pkgfile")
	}
	if m.kept != nil {
		return m.kept, nil
	}
	return m.pkg.load(m)
}

// Package is a package file, indexed: its ELF members' names, sizes and
// build-ids, and how to read it again.
type Package struct {
	Path    string   // as named by the user
	Format  string   // Deb, RPM, Tar or Ar
	Stream  string   // the compression of the payload: gzip, xz, zstd, bzip2 or none
	Members []Member // the ELF members, in archive order
	// Unpacked is the bytes decompressed from the package, for the
	// bound's error message and the docs' numbers.
	Unpacked int64

	// open reads the package again: the file, checked to be the one
	// indexed, or the bytes Read was given.
	open func() (io.ReaderAt, int64, func(), error)
}

// ErrNotPackage: the file starts like an archive (a compressed stream, a
// thin ar archive) but is no package: a compressed text. A walk lists it
// as not an ELF file rather than failing on it.
var ErrNotPackage = errors.New("not a package")

// Reader is a member as an input: its bytes are read when Load asks for
// them, and dropped by the caller when done.
type Reader struct{ m Member }

// NewReader returns a Reader of the member.
func NewReader(m Member) Reader { return Reader{m} }

// Load reads the member's bytes (Member.Load).
func (r Reader) Load() ([]byte, error) { return r.m.Load() }

// ReadAt reads the member through Load: a Reader is an io.ReaderAt for
// callers that take one; inputs.Input.Open uses Load.
func (r Reader) ReadAt(b []byte, off int64) (int, error) {
	data, err := r.m.Load()
	if err != nil {
		return 0, err
	}
	return bytes.NewReader(data).ReadAt(b, off)
}

// Size is the member's size.
func (r Reader) Size() int64 { return r.m.Size }

// Display is how a member is named in reports and errors.
func (p *Package) Display(m Member) string { return p.Path + "!" + m.Name }

// Inputs are the members to check: the ELF files outside DebugDir.
func (p *Package) Inputs() []Member {
	var out []Member
	for _, m := range p.Members {
		if !m.Debug() {
			out = append(out, m)
		}
	}
	return out
}

// DebugOnly reports whether every ELF member is a debug file: a -dbgsym
// or -debuginfo package, whose debug files are the inputs when it is given
// alone (docs/packages.md#debug-packages).
func (p *Package) DebugOnly() bool { return len(p.Members) > 0 && len(p.Inputs()) == 0 }

// AddDebug adds every member to the in-memory debug lookup: a debug file
// under DebugDir answers by its build-id and its file name, and a member
// with embedded DWARF elsewhere may be the debug file of another input too.
// Only the member's name, build-id and loader are kept.
func (p *Package) AddDebug(md *elfread.MemDebug) {
	for _, m := range p.Members {
		md.AddLazy(p.Display(m), m.BuildID, m.Load)
	}
}

// Detect says which package format the data starts with, or "" when it is
// none (an ELF file, say). The magic decides, not the file name.
func Detect(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte(arMagic)):
		return Deb // or Ar: the first member decides (ar.go)
	case bytes.HasPrefix(head, rpmLeadMagic):
		return RPM
	case compression(head) != "":
		return Tar
	case len(head) >= 263 && string(head[257:262]) == "ustar":
		return Tar
	}
	return ""
}

// IsPackageFile reports whether the regular file at path starts like a
// package or archive (Detect of its first 512 bytes). A file that cannot be
// read is not: its reader names the problem.
func IsPackageFile(path string) bool {
	f, _, err := regfile.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	return Detect(head[:n]) != ""
}

// Open indexes the package file at path: only a regular file, at most
// MaxPackage bytes, streamed (never read whole). Errors are
// *elfread.InputError naming the package and, where one is at fault, the
// member.
func Open(path string) (*Package, error) {
	f, st, err := regfile.Open(path)
	if err != nil {
		var nr *regfile.NotRegularError
		if errors.As(err, &nr) {
			return nil, elfread.InputErrorf(path, "is %s; give a package file", nr.What())
		}
		return nil, elfread.InputErrorf(path, "cannot read: %w", err)
	}
	defer f.Close()
	if st.Size() > MaxPackage {
		return nil, elfread.InputErrorf(path, "larger than %d bytes, the most a package is read", int64(MaxPackage))
	}
	size, mod := st.Size(), st.ModTime()
	p := &Package{Path: path}
	p.open = func() (io.ReaderAt, int64, func(), error) {
		g, st, err := regfile.Open(path)
		if err != nil {
			return nil, 0, nil, elfread.InputErrorf(path, "cannot read again: %w", err)
		}
		if st.Size() != size || !st.ModTime().Equal(mod) {
			g.Close()
			return nil, 0, nil, changed(path, st, size, mod)
		}
		return g, size, func() { g.Close() }, nil
	}
	if err := p.index(f, size); err != nil {
		return nil, err
	}
	return p, nil
}

// index's kept bytes are given back to the process's budget when the
// package is dropped.
func (p *Package) keepAccount() {
	var n int64
	for _, m := range p.Members {
		n += int64(len(m.kept))
	}
	if n > 0 {
		runtime.AddCleanup(p, func(n int64) { keptBytes.Add(-n) }, n)
	}
}

func changed(path string, st os.FileInfo, size int64, mod time.Time) error {
	return elfread.InputErrorf(path, "changed while it was read (%d bytes, modified %s; first %d bytes, modified %s): give a package file nothing writes to",
		st.Size(), st.ModTime().UTC().Format(time.RFC3339Nano), size, mod.UTC().Format(time.RFC3339Nano))
}

// Read indexes a package held in data; name is the package's name in
// errors and member names.
func Read(name string, data []byte) (*Package, error) {
	p := &Package{Path: name}
	p.open = func() (io.ReaderAt, int64, func(), error) {
		return bytes.NewReader(data), int64(len(data)), func() {}, nil
	}
	if err := p.index(bytes.NewReader(data), int64(len(data))); err != nil {
		return nil, err
	}
	return p, nil
}

// index reads the package once through: every stream to its end (so each
// format's own integrity check runs), every ELF member's build-id and CRC.
func (p *Package) index(ra io.ReaderAt, size int64) error {
	r := &reader{pkg: p, ra: ra, size: size, budget: Limit(size), want: -1, at: -1}
	err := r.run()
	if err != nil {
		for _, m := range p.Members {
			keptBytes.Add(-int64(len(m.kept)))
		}
		return err
	}
	p.keepAccount()
	return nil
}

// load reads member m again (Member.Load).
func (p *Package) load(m Member) ([]byte, error) {
	ra, size, done, err := p.open()
	if err != nil {
		return nil, err
	}
	defer done()
	q := &Package{Path: p.Path}
	r := &reader{pkg: q, ra: ra, size: size, budget: Limit(size), want: m.ord, at: -1}
	if m.at >= 0 && m.at <= size && m.Size <= size-m.at {
		// Stored as is: read in place.
		r.got = make([]byte, m.Size)
		if _, err := ra.ReadAt(r.got, m.at); err != nil {
			return nil, elfread.InputErrorf(p.Path, "member %s: cannot read again: %w", m.Name, err)
		}
	} else {
		err = r.run()
		if errors.Is(err, errFound) {
			err = nil
		}
	}
	switch {
	case err != nil:
		return nil, err
	case r.got == nil || int64(len(r.got)) != m.Size || crc32.ChecksumIEEE(r.got) != m.crc:
		return nil, elfread.InputErrorf(p.Path, "member %s: changed since the package was first read: give a package file nothing writes to", m.Name)
	}
	return r.got, nil
}

// errFound stops a load's read at the member it wants.
var errFound = errors.New("member found")

// reader is one read of a package.
type reader struct {
	pkg    *Package
	ra     io.ReaderAt
	size   int64           // the package's bytes
	budget int64           // decompressed bytes left
	names  map[string]bool // member names seen, for duplicates
	n      int             // ELF members met so far
	want   int             // the ELF member a load wants, or -1 to index
	got    []byte          // its bytes
	at     int64           // where the member being read starts in the file, when it is stored as is (a static library's), else -1
}

func (r *reader) run() error {
	var head [512]byte
	n, err := r.ra.ReadAt(head[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return elfread.InputErrorf(r.pkg.Path, "cannot read: %w", err)
	}
	all := io.NewSectionReader(r.ra, 0, r.size)
	switch r.pkg.Format = Detect(head[:n]); r.pkg.Format {
	case Deb:
		err = r.ar(all)
	case RPM:
		err = r.rpm(all)
	case Tar:
		err = r.tarball(all, "")
	default:
		return elfread.InputErrorf(r.pkg.Path, "not a package: starts with neither a .deb's \"!<arch>\", an .rpm's lead, a tar header nor a gzip, xz or zstd stream")
	}
	return err
}

// fail is an error about the package as a whole (member "") or a member.
func (r *reader) fail(member, format string, args ...any) error {
	e := fmt.Errorf(format, args...)
	msg := e.Error()
	if member != "" {
		msg = "member " + member + ": " + msg
	}
	if w := errors.Unwrap(e); w != nil {
		return &elfread.InputError{Path: r.pkg.Path, Msg: oneLine(msg), Err: w}
	}
	return elfread.InputErrorf(r.pkg.Path, "%s", msg)
}

// oneLine keeps a message on one line whatever names it holds.
func oneLine(s string) string {
	return strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(s)
}

// memberName is the name a stored name is shown with.
func memberName(stored string) string {
	n := strings.TrimPrefix(stored, "./")
	if !strings.HasPrefix(n, "/") {
		n = "/" + n
	}
	return n
}

// isELF: the bytes start with ELF's magic.
func isELF(data []byte) bool { return len(data) >= 16 && bytes.HasPrefix(data, []byte("\x7fELF")) }

// file records one regular-file member (as stored): a name seen twice
// is refused, since which of the two a check read would be a guess. An ELF
// member is indexed (its bytes dropped once its build-id and CRC are
// known), or, when it is the one a load wants, kept and the read stopped.
func (r *reader) file(stored string, data []byte, elf bool) error {
	at := r.at
	r.at = -1
	name := memberName(stored)
	if r.pkg.Format == Ar {
		name = stored // a static library's member: as ar names it
	}
	if r.names == nil {
		r.names = map[string]bool{}
	}
	key := path.Clean("/" + name)
	if r.names[key] {
		return r.fail(stored, "appears twice in the package; which one is meant is a guess, so the package is refused")
	}
	r.names[key] = true
	if !elf {
		return nil
	}
	ord := r.n
	r.n++
	if r.want >= 0 {
		if ord == r.want {
			r.got = data
			return errFound
		}
		return nil
	}
	m := Member{Name: name, Size: int64(len(data)), crc: crc32.ChecksumIEEE(data), ord: ord, pkg: r.pkg, at: at}
	if f, err := elfread.NewMemFile(r.pkg.Display(m), data); err == nil {
		m.BuildID = f.BuildID
		f.Close()
	}
	if m.Size <= keepMember && m.at < 0 && keptBytes.Add(m.Size) <= keepTotal {
		m.kept = data
	} else if m.Size <= keepMember && m.at < 0 {
		keptBytes.Add(-m.Size)
	}
	r.pkg.Members = append(r.pkg.Members, m)
	return nil
}

// skipELF reports whether the next ELF member's bytes are not needed: a
// load wants another one.
func (r *reader) skipELF() bool { return r.want >= 0 && r.n != r.want }
