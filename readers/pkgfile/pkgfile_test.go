package pkgfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/readers/elfread"
)

// names lists a package's members as displayed.
func names(p *Package) []string {
	var out []string
	for _, m := range p.Members {
		out = append(out, p.Display(m))
	}
	return out
}

// usual is a package's content: a library, a symlink to it, a non-ELF
// file, and a debug file.
func usual() []entry {
	return []entry{
		{name: "./usr/"},
		{name: "./usr/lib/libnrt.so.1", data: fakeELF("lib")},
		{name: "./usr/lib/libnrt.so", link: "libnrt.so.1"},
		{name: "./usr/share/doc/README", data: []byte("text, not ELF\n")},
		{name: "./usr/lib/debug/.build-id/ab/cdef.debug", data: fakeELF("dbg")},
	}
}

// TestFormats: every format and compression reads to the same ELF members,
// named PACKAGE!/path; the symlink and the text file are no members, and
// the debug file is no input.
func TestFormats(t *testing.T) {
	want := []string{"p!/usr/lib/libnrt.so.1", "p!/usr/lib/debug/.build-id/ab/cdef.debug"}
	cases := map[string][]byte{}
	for _, k := range []string{"none", "gzip", "xz", "zstd"} {
		cases["tar "+k] = compress(t, k, tarOf(t, usual()...))
		cases["deb "+k] = debOf(t, k, usual()...)
	}
	for _, k := range []string{"gzip", "xz", "zstd", ""} {
		cases["rpm "+k] = rpmOf(t, k, cpioOf(usual()[1:]...))
	}
	for name, data := range cases {
		p, err := Read("p", data)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := names(p); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: members %q, want %q", name, got, want)
		}
		if in := p.Inputs(); len(in) != 1 || in[0].Name != "/usr/lib/libnrt.so.1" {
			t.Errorf("%s: inputs %v, want the library alone", name, in)
		}
		if b, err := p.Members[0].Load(); err != nil || !bytes.Equal(b, fakeELF("lib")) {
			t.Errorf("%s: the library's bytes differ", name)
		}
	}
}

// TestHostile: every hostile archive is refused with one line naming the
// package and the member at fault (docs/packages.md#integrity-checks).
func TestHostile(t *testing.T) {
	lib := fakeELF("lib")
	good := tarOf(t, entry{name: "./a.so", data: lib}, entry{name: "./b.so", data: lib})
	at := bytes.Index(good[512:], lib) + 512 // a.so's data
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"duplicate tar member", tarOf(t, entry{name: "./a.so", data: lib}, entry{name: "a.so", data: lib}), "member a.so: appears twice"},
		{"duplicate in a deb", debOf(t, "xz", entry{name: "./a.so", data: lib}, entry{name: "./x/../a.so", data: lib}), "member ./x/../a.so: appears twice"},
		{"truncated tar", good[:at+8], "member ./a.so: the archive ends inside this member"},
		{"truncated gzip tar", func() []byte { z := compress(t, "gzip", good); return z[:len(z)-40] }(), "member ./a.so"},
		{"tar member larger than declared", func() []byte {
			// a.so's header declares 8 bytes fewer than its data: the
			// rest is read as the next header.
			b := tarOf(t, entry{name: "./a.so", data: append(lib, make([]byte, 600)...)}, entry{name: "./b.so", data: lib})
			h := tarOf(t, entry{name: "./a.so", data: make([]byte, len(lib)+600-520)})
			copy(b[:512], h[:512])
			return b
		}(), "member ./a.so: after this member"},
		{"ar member larger than declared", arOf(entry{name: "debian-binary", data: []byte("2.0\n"), size: 2}, entry{name: "data.tar", data: good}), "member debian-binary: the ar header after this member"},
		{"ar member smaller than declared", arOf(entry{name: "debian-binary", data: []byte("2.0\n")}, entry{name: "data.tar", data: good, size: int64(len(good)) + 100}), "member data.tar: declares"},
		{"two data.tar", arOf(entry{name: "debian-binary", data: []byte("2.0\n")}, entry{name: "data.tar", data: good}, entry{name: "data.tar.gz", data: compress(t, "gzip", good)}), "member data.tar.gz: a second data.tar"},
		{"deb without data", arOf(entry{name: "debian-binary", data: []byte("2.0\n")}), "a .deb without a data.tar member"},
		{"cpio member larger than declared", rpmOf(t, "gzip", cpioOf(entry{name: "./usr/lib/a.so", data: append(lib, 1, 2, 3, 4, 5, 6, 7, 8), size: int64(len(lib))})), "member ./usr/lib/a.so: after this member comes no cpio header"},
		{"cpio member smaller than declared", rpmOf(t, "gzip", cpioOf(entry{name: "./usr/lib/a.so", data: lib, size: 1 << 20})[:200]), "member ./usr/lib/a.so: the payload ends inside this member"},
		{"cpio without trailer", rpmOf(t, "xz", func() []byte {
			c := cpioOf(entry{name: "./a.so", data: lib})
			return c[:bytes.LastIndex(c, []byte("070701"))]
		}()), "the payload ends"},
		{"rpm compressor lies", func() []byte {
			r := rpmOf(t, "xz", cpioOf(entry{name: "./a.so", data: lib}))
			i := bytes.Index(r, []byte{0xfd, '7', 'z', 'X', 'Z', 0})
			return append(r[:i:i], compress(t, "gzip", cpioOf(entry{name: "./a.so", data: lib}))...)
		}(), `PAYLOADCOMPRESSOR is "xz" but the payload starts as gzip`},
		{"rpm lzma refused", rpmOf(t, "lzma", cpioOf()), "lzma compression is not read"},
		{"rpm header cut", rpmOf(t, "gzip", cpioOf())[:rpmLead+8], "truncated in the signature header"},
		{"rpm header past the end", func() []byte {
			r := rpmOf(t, "gzip", cpioOf())
			r[rpmLead+12] = 0x7f // the signature header's data size
			return r
		}(), "the signature header declares 0 entries and 2130706432 bytes of data, past the package's end"},
		{"rpm truncated lead", rpmOf(t, "gzip", cpioOf())[:50], "shorter than an rpm's 96-byte lead"},
		{"rpm not cpio", func() []byte {
			r := rpmOf(t, "gzip", cpioOf())
			i := bytes.Index(r, []byte("cpio\x00"))
			copy(r[i:], "drpm")
			return r
		}(), `payload format "drpm"`},
		{"cpio name too long", rpmOf(t, "gzip", cpioOf(entry{name: strings.Repeat("a", 5000), data: lib})), "declares a 5001-byte name"},
	}
	for _, c := range cases {
		_, err := Read("hostile.pkg", c.data)
		if err == nil {
			t.Errorf("%s: read without error", c.name)
			continue
		}
		var ie *elfread.InputError
		if !errors.As(err, &ie) || ie.Path != "hostile.pkg" || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: want one line naming hostile.pkg and %q, got %v", c.name, c.want, err)
		}
	}
}

// TestTraversalNamesAreNames: ../ and absolute member names are read as
// names, shown as they are stored, and nothing is written anywhere.
func TestTraversalNamesAreNames(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	lib := fakeELF("lib")
	for _, data := range [][]byte{
		tarOf(t, entry{name: "../../evil.so", data: lib}, entry{name: "/abs/evil2.so", data: lib}, entry{name: "ok\n.so", data: lib}),
		rpmOf(t, "zstd", cpioOf(entry{name: "../../evil.so", data: lib}, entry{name: "/abs/evil2.so", data: lib}, entry{name: "ok\n.so", data: lib})),
	} {
		p, err := Read("p", data)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(names(p), "|"); got != "p!/../../evil.so|p!/abs/evil2.so|p!/ok\n.so" {
			t.Errorf("members %q", got)
		}
	}
	if ents, _ := os.ReadDir(filepath.Dir(dir)); len(ents) != 1 {
		t.Errorf("something was written next to the working directory: %v", ents)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("something was written in the working directory: %v", ents)
	}
}

// TestLinksNotFollowed: a symlink or hard link member is no member, inside
// the archive or out of it; the file a hard link names is read where it is
// stored.
func TestLinksNotFollowed(t *testing.T) {
	lib := fakeELF("lib")
	p, err := Read("p", tarOf(t, entry{name: "lib/a.so", data: lib}, entry{name: "lib/b.so", link: "a.so"},
		entry{name: "lib/c.so", link: "/etc/passwd"}, entry{name: "lib/d.so", link: "lib/a.so", hard: true}))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(p), " "); got != "p!/lib/a.so" {
		t.Errorf("members %q, want only the stored file", got)
	}
}

// TestNotNested: an archive inside a package is not opened (no nesting
// beyond what the formats need), and a compressed file that is no package
// is ErrNotPackage.
func TestNotNested(t *testing.T) {
	lib := fakeELF("lib")
	inner := debOf(t, "gzip", entry{name: "./inner.so", data: lib})
	p, err := Read("p", tarOf(t, entry{name: "x.deb", data: inner}, entry{name: "y.tar.gz", data: compress(t, "gzip", tarOf(t, entry{name: "z.so", data: lib}))}))
	if err != nil || len(p.Members) != 0 {
		t.Errorf("nested archives: %v, members %v; want none", err, names(p))
	}
	for name, data := range map[string][]byte{
		"gzip text": compress(t, "gzip", []byte(strings.Repeat("changelog\n", 100))),
		"xz text":   compress(t, "xz", []byte("x")),
	} {
		if _, err := Read("f", data); !errors.Is(err, ErrNotPackage) {
			t.Errorf("%s: want ErrNotPackage, got %v", name, err)
		}
	}
	if _, err := Read("f", lib); err == nil || errors.Is(err, ErrNotPackage) || !strings.Contains(err.Error(), "not a package") {
		t.Errorf("an ELF file: want 'not a package', got %v", err)
	}
}

// TestBomb: a package decompressing past Limit of its size is refused by
// name, whatever the compression, before the bytes past the bound are
// kept; the count stops at the bound.
func TestBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: decompresses 16 MiB per format (-short)")
	}
	defer func(f int64) { floor = f }(floor)
	floor = 8 << 20 // at least the zstd encoder's window, which the decoder's memory bound must hold
	zeros := make([]byte, floor+8<<20)
	for _, k := range []string{"gzip", "xz", "zstd"} {
		for _, member := range [][]byte{zeros, append(fakeELF("big"), zeros...)} {
			data := compress(t, k, tarOf(t, entry{name: "./big", data: member}))
			if Limit(int64(len(data))) >= int64(len(zeros)) {
				t.Fatalf("%s: the bomb (%d bytes) is within the bound %d; make it larger", k, len(data), Limit(int64(len(data))))
			}
			p, err := Read("bomb.tar", data)
			want := "bomb.tar: member ./big: decompresses to more than"
			if k == "xz" {
				want = "bomb.tar: decompresses to more than" // from the index, before any member
			}
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "decompression bomb") {
				t.Errorf("%s: want the bomb refused naming bomb.tar and ./big, got %v (%v)", k, err, p)
			}
		}
	}
	// A zstd frame whose window the bound cannot hold is the bound reached,
	// not "a stream that holds no tar archive".
	floor = 1 << 20
	wide := compress(t, "zstd", tarOf(t, entry{name: "./big", data: zeros}))
	if _, err := Read("wide.tar.zst", wide); err == nil || !strings.Contains(err.Error(), "decompression bomb") {
		t.Errorf("a zstd window past the bound: %v", err)
	}
	floor = 8 << 20
	// Within the bound: the same bytes at a lower ratio read.
	small := compress(t, "zstd", tarOf(t, entry{name: "./ok.so", data: append(fakeELF("ok"), make([]byte, 1<<20)...)}))
	if _, err := Read("ok.tar.zst", small); err != nil {
		t.Errorf("1 MiB of zeros: %v", err)
	}
}

// TestOpenOnlyRegular: Open reads regular files only.
func TestOpenOnlyRegular(t *testing.T) {
	if _, err := Open(t.TempDir()); err == nil || !strings.Contains(err.Error(), "give a package file") {
		t.Errorf("a directory: %v", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "none.deb")); err == nil || !strings.Contains(err.Error(), "none.deb: cannot read") {
		t.Errorf("a missing file: %v", err)
	}
}

// TestXZDictionaryBound: an xz stream whose block header asks for a
// dictionary over maxDict is refused before the decoder allocates it (a
// 200-byte stream asking for 4 GiB took 9 s and 4 GiB before the check);
// a stream whose index declares more than the bound is refused unread.
func TestXZDictionaryBound(t *testing.T) {
	good := compress(t, "xz", tarOf(t, entry{name: "a.so", data: fakeELF("x")}))
	if _, err := Read("ok.tar.xz", good); err != nil {
		t.Fatalf("an 8 MiB dictionary: %v", err)
	}
	for _, code := range []byte{0x24, 0x28} {
		x := append([]byte(nil), good...)
		hs := int(x[12]+1) * 4
		x[16] = code // the LZMA2 dictionary code of the first block
		binary.LittleEndian.PutUint32(x[12+hs-4:], crc32.ChecksumIEEE(x[12:12+hs-4]))
		_, err := Read("dict.tar.xz", x)
		if err == nil || !strings.Contains(err.Error(), "dict.tar.xz: xz stream: xz block 0: asks for a") {
			t.Errorf("dictionary code %#x: want it refused by name, got %v", code, err)
		}
	}
	x := append([]byte(nil), good...)
	x = append(x, compress(t, "xz", []byte("second stream"))...)
	x[len(x)-1] ^= 1 // the second stream's footer magic
	if _, err := Read("two.tar.xz", x); err == nil || !strings.Contains(err.Error(), "two.tar.xz: xz stream: xz stream without its footer") {
		t.Errorf("two streams, the second without its footer: want refused, got %v", err)
	}
}

// rawHeader is one ustar header block, checksummed.
func rawHeader(name string, typ byte, size int64) []byte {
	h := make([]byte, 512)
	copy(h, name)
	copy(h[100:], "0000644\x00")
	copy(h[108:], "0000000\x00")
	copy(h[116:], "0000000\x00")
	copy(h[124:], fmt.Sprintf("%011o\x00", size))
	copy(h[136:], "00000000000\x00")
	h[156] = typ
	copy(h[257:], "ustar\x0000")
	copy(h[148:], "        ")
	sum := 0
	for _, c := range h {
		sum += int(c)
	}
	copy(h[148:], fmt.Sprintf("%06o\x00 ", sum))
	return h
}

func pad512(b []byte) []byte { return append(b, make([]byte, (512-len(b)%512)%512)...) }

// TestSparseNotExpanded: a PAX sparse member declaring a 16 TiB file of
// holes is not read through (its holes are never made): a non-ELF one is
// passed over at once, an ELF one is refused by the bound before anything
// is allocated. (Before, draining the holes of such a member ran for hours.)
func TestSparseNotExpanded(t *testing.T) {
	sparse := func(first []byte) []byte {
		const real = 1 << 44
		pax := ""
		for _, kv := range [][2]string{{"GNU.sparse.major", "1"}, {"GNU.sparse.minor", "0"}, {"GNU.sparse.name", "holes.bin"}, {"GNU.sparse.realsize", fmt.Sprint(int64(real))}} {
			rec := " " + kv[0] + "=" + kv[1] + "\n"
			n := len(rec) + 2
			for len(fmt.Sprint(n))+len(rec) != n {
				n++
			}
			pax += fmt.Sprint(n) + rec
		}
		// The sparse map: one 512-byte data run at 0, then holes to the end.
		data := append(pad512([]byte("1\n0\n512\n")), pad512(first)...)
		var b bytes.Buffer
		b.Write(rawHeader("./PaxHeaders/holes.bin", 'x', int64(len(pax))))
		b.Write(pad512([]byte(pax)))
		b.Write(rawHeader("./GNUSparseFile.0/holes.bin", '0', int64(len(data))))
		b.Write(data)
		b.Write(make([]byte, 1024))
		return b.Bytes()
	}
	done := make(chan error, 2)
	go func() {
		_, err := Read("sparse.tar", sparse([]byte("text, not ELF")))
		done <- err
		_, err = Read("sparse-elf.tar", sparse(fakeELF("x")))
		done <- err
	}()
	for i, want := range []string{"", "sparse-elf.tar: member holes.bin: decompresses to more than"} {
		select {
		case err := <-done:
			if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
				t.Errorf("case %d: want %q, got %v", i, want, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("a sparse member's holes are being read through")
		}
	}
}
