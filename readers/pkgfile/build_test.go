package pkgfile

import (
	"archive/tar"
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// The archives of these tests are written here, byte by byte where a
// hostile one needs a lie in a header; the real tools' packages are the
// cmd/nrtabi and runtime/e2e tests' (dpkg-deb, rpmbuild).

// fakeELF is enough of an ELF file for the archive readers, which know ELF
// only by its magic.
func fakeELF(tag string) []byte {
	return append([]byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00"), tag...)
}

type entry struct {
	name string
	data []byte
	link string // a symlink's target
	hard bool   // a hard link to link
	size int64  // the size the header declares, when not len(data)
}

func tarOf(t testing.TB, es ...entry) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range es {
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.data)), Typeflag: tar.TypeReg}
		switch {
		case strings.HasSuffix(e.name, "/"):
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		case e.hard:
			h.Typeflag, h.Linkname, h.Size = tar.TypeLink, e.link, 0
		case e.link != "":
			h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, e.link, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// xzDictCap is the xz dictionary compress writes with: xz's 8 MiB, which
// the reader allocates once a pass; the fuzz targets' seeds use 64 KiB, so
// an exec costs microseconds, not the milliseconds of an 8 MiB allocation.
var xzDictCap = 8 << 20

func compress(t testing.TB, kind string, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	switch kind {
	case "none", "lzma": // lzma has no magic; its payload is never read
		return data
	case "gzip":
		w, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
		w.Write(data)
		w.Close()
	case "xz":
		w, err := xz.WriterConfig{DictCap: xzDictCap}.NewWriter(&b)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		w.Close()
	case "zstd":
		w, err := zstd.NewWriter(&b, zstd.WithEncoderLevel(zstd.SpeedFastest))
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		w.Close()
	default:
		t.Fatalf("compress %s", kind)
	}
	return b.Bytes()
}

// arOf writes an ar archive; a member's declared size may lie.
func arOf(members ...entry) []byte {
	var b bytes.Buffer
	b.WriteString(arMagic)
	for _, m := range members {
		size := int64(len(m.data))
		if m.size != 0 {
			size = m.size
		}
		fmt.Fprintf(&b, "%-16s%-12d%-6d%-6d%-8s%-10d`\n", m.name, 0, 0, 0, "100644", size)
		b.Write(m.data)
		if len(m.data)%2 == 1 {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

func debOf(t testing.TB, kind string, es ...entry) []byte {
	suffix := map[string]string{"none": "", "gzip": ".gz", "xz": ".xz", "zstd": ".zst"}[kind]
	return arOf(entry{name: "debian-binary", data: []byte("2.0\n")},
		entry{name: "control.tar.gz", data: compress(t, "gzip", tarOf(t, entry{name: "./control", data: []byte("Package: x\n")}))},
		entry{name: "data.tar" + suffix, data: compress(t, kind, tarOf(t, es...))})
}

// cpioOf writes a newc cpio archive; a member's declared size may lie.
func cpioOf(es ...entry) []byte {
	var b bytes.Buffer
	pad := func() {
		for b.Len()%4 != 0 {
			b.WriteByte(0)
		}
	}
	add := func(name string, mode uint32, nlink int, data []byte, size int64) {
		fmt.Fprintf(&b, "070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
			1, mode, 0, 0, nlink, 0, size, 0, 0, 0, 0, len(name)+1, 0)
		b.WriteString(name)
		b.WriteByte(0)
		pad()
		b.Write(data)
		pad()
	}
	for _, e := range es {
		size := int64(len(e.data))
		if e.size != 0 {
			size = e.size
		}
		switch {
		case e.link != "":
			add(e.name, 0o120777, 1, []byte(e.link), int64(len(e.link)))
		default:
			add(e.name, 0o100644, 1, e.data, size)
		}
	}
	add("TRAILER!!!", 0, 1, nil, 0)
	return b.Bytes()
}

// rpmHeaderOf writes an rpm header structure of string tags.
func rpmHeaderOf(tags map[int]string) []byte {
	var index, store bytes.Buffer
	for _, tag := range []int{tagPayloadFormat, tagPayloadCompressor} {
		v, ok := tags[tag]
		if !ok {
			continue
		}
		binary.Write(&index, binary.BigEndian, []uint32{uint32(tag), typeString, uint32(store.Len()), 1})
		store.WriteString(v)
		store.WriteByte(0)
	}
	var b bytes.Buffer
	b.Write(rpmHeaderMagic)
	b.Write([]byte{0, 0, 0, 0})
	binary.Write(&b, binary.BigEndian, []uint32{uint32(index.Len() / 16), uint32(store.Len())})
	b.Write(index.Bytes())
	b.Write(store.Bytes())
	return b.Bytes()
}

// rpmOf writes an .rpm: lead, an empty signature header padded to 8, the
// main header naming the compressor, and the compressed cpio payload.
func rpmOf(t testing.TB, comp string, payload []byte) []byte {
	var b bytes.Buffer
	lead := make([]byte, rpmLead)
	copy(lead, rpmLeadMagic)
	b.Write(lead)
	b.Write(rpmHeaderOf(nil))
	for b.Len()%8 != 0 {
		b.WriteByte(0)
	}
	tags := map[int]string{tagPayloadFormat: "cpio"}
	if comp != "" {
		tags[tagPayloadCompressor] = comp
	}
	b.Write(rpmHeaderOf(tags))
	kind := comp
	if kind == "" {
		kind = "gzip"
	}
	b.Write(compress(t, kind, payload))
	return b.Bytes()
}
