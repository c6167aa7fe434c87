package pkgfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/nrtabi/nrtabi/internal/regfile"
	"github.com/nrtabi/nrtabi/layoutcheck/elfread"
)

// Formats, as Package.Format names them.
const (
	Deb = "deb"
	RPM = "rpm"
	Tar = "tar"
)

// MaxPackage bounds the size of a package file: it is read into memory whole.
const MaxPackage = 8 << 30

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

// Member is one ELF file inside a package.
type Member struct {
	// Name is the member's path inside the package as the archive stores
	// it, with a leading "./" taken off and a "/" put in front: a name
	// only, never a path on this machine (it may hold "..").
	Name string
	Data []byte
}

// Debug reports whether the member is a separate debug file.
func (m Member) Debug() bool { return strings.HasPrefix(m.Name, DebugDir) }

// Package is a package file read in memory.
type Package struct {
	Path    string   // as named by the user
	Format  string   // Deb, RPM or Tar
	Stream  string   // the compression of the payload: gzip, xz, zstd, bzip2 or none
	Members []Member // the ELF members, in archive order
	// Unpacked is the bytes decompressed from the package, for the
	// bound's error message and the docs' numbers.
	Unpacked int64
}

// ErrNotPackage: the file starts like an archive (an ar archive, a
// compressed stream) but is no package: a static library, a compressed
// text. A walk lists it as not an ELF file rather than failing on it.
var ErrNotPackage = errors.New("not a package")

// Reader is a member's bytes as an io.ReaderAt that hands them back whole
// (Bytes), so the ELF reader uses them in place instead of copying.
type Reader struct {
	*bytes.Reader
	data []byte
}

// NewReader returns a Reader of the member's bytes.
func NewReader(m Member) Reader { return Reader{bytes.NewReader(m.Data), m.Data} }

// Bytes returns the member's bytes, not to be changed.
func (r Reader) Bytes() []byte { return r.data }

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

// AddDebug adds every member to the in-memory debug lookup: a debug file
// under DebugDir answers by its build-id and its file name, and a member
// with embedded DWARF elsewhere may be the debug file of another input too.
func (p *Package) AddDebug(md *elfread.MemDebug) {
	for _, m := range p.Members {
		md.Add(p.Display(m), m.Data)
	}
}

// Detect says which package format the data starts with, or "" when it is
// none (an ELF file, say). The magic decides, not the file name.
func Detect(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte(arMagic)):
		return Deb
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

// Open reads the package file at path: only a regular file, at most
// MaxPackage bytes. Errors are *elfread.InputError naming the package and,
// where one is at fault, the member.
func Open(path string) (*Package, error) {
	data, err := regfile.ReadFile(path, MaxPackage)
	if err != nil {
		var nr *regfile.NotRegularError
		var tl *regfile.TooLargeError
		switch {
		case errors.As(err, &nr):
			return nil, elfread.InputErrorf(path, "is %s; give a package file", nr.What())
		case errors.As(err, &tl):
			return nil, elfread.InputErrorf(path, "larger than %d bytes, the most a package is read into memory", int64(MaxPackage))
		}
		return nil, elfread.InputErrorf(path, "cannot read: %w", err)
	}
	return Read(path, data)
}

// Read reads a package held in data; name is the package's name in errors
// and member names. The members' Data may share data's memory.
func Read(name string, data []byte) (*Package, error) {
	p := &Package{Path: name}
	r := &reader{pkg: p, size: int64(len(data)), budget: Limit(int64(len(data)))}
	var err error
	switch p.Format = Detect(data); p.Format {
	case Deb:
		err = r.deb(data)
	case RPM:
		err = r.rpm(data)
	case Tar:
		err = r.tarball(data, "")
	default:
		return nil, elfread.InputErrorf(name, "not a package: starts with neither a .deb's \"!<arch>\", an .rpm's lead, a tar header nor a gzip, xz or zstd stream")
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// reader is one package being read.
type reader struct {
	pkg    *Package
	size   int64           // the package's bytes
	budget int64           // decompressed bytes left
	names  map[string]bool // member names seen, for duplicates
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

// file records one regular-file member: the ELF ones are kept; a name seen
// twice is refused, since which of the two a check read would be a guess.
func (r *reader) file(stored string, data []byte) error {
	name := memberName(stored)
	if r.names == nil {
		r.names = map[string]bool{}
	}
	key := path.Clean(name)
	if r.names[key] {
		return r.fail(stored, "appears twice in the package; which one is meant is a guess, so the package is refused")
	}
	r.names[key] = true
	if len(data) >= 16 && bytes.HasPrefix(data, []byte("\x7fELF")) {
		r.pkg.Members = append(r.pkg.Members, Member{Name: name, Data: data})
	}
	return nil
}
