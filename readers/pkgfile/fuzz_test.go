package pkgfile

import (
	"bytes"
	"testing"
)

// fuzzRead is the property of every format: Read never panics, returns a
// package or an error naming the package, keeps only ELF members, and
// never counts past the bound.
func fuzzRead(t *testing.T, data []byte) {
	p, err := Read("f", data)
	if err != nil {
		if p != nil {
			t.Fatal("a package and an error")
		}
		if !bytes.HasPrefix([]byte(err.Error()), []byte("f: ")) {
			t.Fatalf("error not naming the package: %v", err)
		}
		return
	}
	if p.Unpacked > Limit(int64(len(data)))+1 {
		t.Fatalf("decompressed %d bytes, past the bound %d", p.Unpacked, Limit(int64(len(data))))
	}
	for _, m := range p.Members {
		b, err := m.Load()
		if err != nil {
			t.Fatalf("member %q indexed but not read again: %v", m.Name, err)
		}
		if !bytes.HasPrefix(b, []byte("\x7fELF")) || int64(len(b)) != m.Size {
			t.Fatalf("member %q is no ELF file of its size", m.Name)
		}
		// A kept member read again from the package all the same.
		if again, err := p.load(m); err != nil || !bytes.Equal(again, b) {
			t.Fatalf("member %q read again: %v", m.Name, err)
		}
	}
}

func FuzzDeb(f *testing.F) {
	xzDictCap = 64 << 10
	lib := fakeELF("lib")
	for _, k := range []string{"none", "gzip", "xz", "zstd"} {
		f.Add(debOf(f, k, usual()...))
	}
	f.Add(arOf(entry{name: "debian-binary", data: []byte("2.0\n")}, entry{name: "data.tar", data: tarOf(f, entry{name: "a", data: lib}), size: 3}))
	f.Fuzz(fuzzRead)
}

func FuzzRPM(f *testing.F) {
	xzDictCap = 64 << 10
	for _, k := range []string{"gzip", "xz", "zstd", ""} {
		f.Add(rpmOf(f, k, cpioOf(usual()[1:]...)))
	}
	f.Add(rpmOf(f, "none", cpioOf(usual()[1:]...)))
	f.Fuzz(fuzzRead)
}

func FuzzTar(f *testing.F) {
	xzDictCap = 64 << 10
	for _, k := range []string{"none", "gzip", "xz", "zstd"} {
		f.Add(compress(f, k, tarOf(f, usual()...)))
	}
	f.Fuzz(fuzzRead)
}

// FuzzAr: static libraries (ar archives that are no .deb): GNU's symbol
// table and long-name table, BSD's #1/N names, members of one name, the
// empty archive.
func FuzzAr(f *testing.F) {
	lib := fakeELF("lib")
	f.Add([]byte(arMagic))
	f.Add(arOf(entry{name: "/", data: make([]byte, 8)}, entry{name: "//", data: []byte("a_very_long_member_name.o/\n")},
		entry{name: "/0", data: lib}, entry{name: "b.o/", data: lib}, entry{name: "b.o/", data: lib}, entry{name: "notes/", data: []byte("text")}))
	f.Add(arOf(entry{name: "#1/8", data: append([]byte("bsd.o\x00\x00\x00"), lib...)}))
	f.Fuzz(fuzzRead)
}

// FuzzXZStreams: xz streams back to back, with stream padding, walked from
// the end before anything is decoded.
func FuzzXZStreams(f *testing.F) {
	xzDictCap = 64 << 10
	t := tarOf(f, usual()...)
	a, b := compress(f, "xz", t[:len(t)/2]), compress(f, "xz", t[len(t)/2:])
	f.Add(append(append(append([]byte(nil), a...), 0, 0, 0, 0), b...))
	f.Add(append(append([]byte(nil), a...), b...))
	f.Fuzz(fuzzRead)
}
