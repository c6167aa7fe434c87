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
	}
}

func FuzzDeb(f *testing.F) {
	lib := fakeELF("lib")
	for _, k := range []string{"none", "gzip", "xz", "zstd"} {
		f.Add(debOf(f, k, usual()...))
	}
	f.Add(arOf(entry{name: "debian-binary", data: []byte("2.0\n")}, entry{name: "data.tar", data: tarOf(f, entry{name: "a", data: lib}), size: 3}))
	f.Fuzz(fuzzRead)
}

func FuzzRPM(f *testing.F) {
	for _, k := range []string{"gzip", "xz", "zstd", ""} {
		f.Add(rpmOf(f, k, cpioOf(usual()[1:]...)))
	}
	f.Add(rpmOf(f, "none", cpioOf(usual()[1:]...)))
	f.Fuzz(fuzzRead)
}

func FuzzTar(f *testing.F) {
	for _, k := range []string{"none", "gzip", "xz", "zstd"} {
		f.Add(compress(f, k, tarOf(f, usual()...)))
	}
	f.Fuzz(fuzzRead)
}
