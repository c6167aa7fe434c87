package hostile

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// PackageCase is one crafted package file: a stream whose own integrity
// check fails where no archive reader looks (after the tar's end marker),
// or an input as real tools ship it that must be read.
type PackageCase struct {
	Name string
	Path string
	// Want is a part of the one error line the package must be refused
	// with; "" when the package must be read, holding Members ELF members.
	Want    string
	Members int
}

// TarOf is a tar archive of the named files, in order.
func TarOf(files ...[2][]byte) ([]byte, error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: string(f[0]), Mode: 0o644, Size: int64(len(f[1])), Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f[1]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Compress is data as one stream of kind: gzip, xz, zstd (with its content
// checksum, as zstd(1) writes by default) or bzip2 (by bzip2(1): Go has no
// writer).
func Compress(kind string, data []byte) ([]byte, error) {
	var b bytes.Buffer
	var w io.WriteCloser
	var err error
	switch kind {
	case "gzip":
		w = gzip.NewWriter(&b)
	case "xz":
		w, err = xz.NewWriter(&b)
	case "zstd":
		w, err = zstd.NewWriter(&b, zstd.WithEncoderCRC(true))
	case "bzip2":
		cmd := exec.Command("bzip2", "-c")
		cmd.Stdin = bytes.NewReader(data)
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("bzip2: %w", err)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("compress %s", kind)
	}
	if err != nil {
		return nil, err
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// BadCheck is stream (one stream of kind, as Compress writes it) with its
// own integrity check broken and nothing else: gzip's CRC-32 in the
// trailer, the last xz block's check (just before the index), zstd's
// content checksum (the frame's last 4 bytes), bzip2's first block CRC
// (the 4 bytes after "BZh9" and the block magic). Each sits after the
// bytes of a tar's end marker, where an archive reader stops.
func BadCheck(kind string, stream []byte) ([]byte, error) {
	b := append([]byte(nil), stream...)
	switch kind {
	case "gzip":
		b[len(b)-8] ^= 0xff
	case "xz":
		back := (int64(binary.LittleEndian.Uint32(b[len(b)-8:])) + 1) * 4
		idx := int64(len(b)) - 12 - back
		if b[7]&0x0f == 0 {
			return nil, fmt.Errorf("xz stream without a check")
		}
		b[idx-1] ^= 0xff
	case "zstd":
		if b[4]&0x04 == 0 {
			return nil, fmt.Errorf("zstd frame without a content checksum")
		}
		b[len(b)-1] ^= 0xff
	case "bzip2":
		b[10] ^= 0xff
	default:
		return nil, fmt.Errorf("bad check %s", kind)
	}
	return b, nil
}

// ar is an ar archive of the named members.
func ar(members ...[2][]byte) []byte {
	var b bytes.Buffer
	b.WriteString("!<arch>\n")
	for _, m := range members {
		fmt.Fprintf(&b, "%-16s%-12d%-6d%-6d%-8s%-10d`\n", m[0], 0, 0, 0, "100644", len(m[1]))
		b.Write(m[1])
		if len(m[1])%2 == 1 {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// Deb is a .deb of a data.tar compressed as kind (its stream as given).
func Deb(dataName string, data []byte) ([]byte, error) {
	ctl, err := TarOf([2][]byte{[]byte("./control"), []byte("Package: x\n")})
	if err != nil {
		return nil, err
	}
	ctlz, err := Compress("gzip", ctl)
	if err != nil {
		return nil, err
	}
	return ar([2][]byte{[]byte("debian-binary"), []byte("2.0\n")}, [2][]byte{[]byte("control.tar.gz"), ctlz}, [2][]byte{[]byte(dataName), data}), nil
}

// skippable is a zstd skippable frame (RFC 8878 section 3.1.2) as pzstd
// writes one before its frames: magic 0x184D2A50, size, payload.
func skippable(payload []byte) []byte {
	b := []byte{0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(b[4:], uint32(len(payload)))
	return append(b, payload...)
}

// PackageCases writes the crafted packages into dir around lib, an ELF
// file's bytes (any ELF: only its magic matters to the package reader).
// bzip2's cases are left out, with a reason, when bzip2(1) is missing.
func PackageCases(dir string, lib []byte) ([]PackageCase, []string, error) {
	tarball, err := TarOf([2][]byte{[]byte("./usr/lib/libx.so.1"), lib}, [2][]byte{[]byte("./usr/share/doc/README"), []byte("text\n")})
	if err != nil {
		return nil, nil, err
	}
	var cases []PackageCase
	var skipped []string
	add := func(name string, data []byte, want string, members int) error {
		p := filepath.Join(dir, name)
		cases = append(cases, PackageCase{Name: name, Path: p, Want: want, Members: members})
		return os.WriteFile(p, data, 0o644)
	}
	ext := map[string]string{"gzip": "gz", "xz": "xz", "zstd": "zst", "bzip2": "bz2"}
	for _, kind := range []string{"gzip", "xz", "zstd", "bzip2"} {
		if kind == "bzip2" {
			if _, err := exec.LookPath("bzip2"); err != nil {
				skipped = append(skipped, "bzip2 cases: bzip2(1) not found (.ci/run installs it)")
				continue
			}
		}
		z, err := Compress(kind, tarball)
		if err != nil {
			return nil, nil, err
		}
		bad, err := BadCheck(kind, z)
		if err != nil {
			return nil, nil, err
		}
		want := "the " + kind + " stream fails its own integrity check"
		if err := add("good.tar."+ext[kind], z, "", 1); err != nil {
			return nil, nil, err
		}
		if err := add("badcheck.tar."+ext[kind], bad, want, 0); err != nil {
			return nil, nil, err
		}
		deb, err := Deb("data.tar."+ext[kind], bad)
		if err != nil {
			return nil, nil, err
		}
		if err := add("badcheck-"+kind+".deb", deb, want, 0); err != nil {
			return nil, nil, err
		}
	}
	// As tools ship them: a pzstd-style skippable frame first; a tar
	// split over two xz streams back to back (cat a.xz b.xz); glibc's
	// empty libanl.a stub; a static library of one object.
	z, err := Compress("zstd", tarball)
	if err != nil {
		return nil, nil, err
	}
	if err := add("skippable.tar.zst", append(skippable([]byte("pzstd")), z...), "", 1); err != nil {
		return nil, nil, err
	}
	half := len(tarball) / 2
	x1, err := Compress("xz", tarball[:half])
	if err != nil {
		return nil, nil, err
	}
	x2, err := Compress("xz", tarball[half:])
	if err != nil {
		return nil, nil, err
	}
	two := append(append(x1, 0, 0, 0, 0), x2...) // stream padding between them
	if err := add("two-streams.tar.xz", two, "", 1); err != nil {
		return nil, nil, err
	}
	if err := add("libanl.a", []byte("!<arch>\n"), "", 0); err != nil {
		return nil, nil, err
	}
	if err := add("libx.a", ar([2][]byte{[]byte("/"), make([]byte, 8)}, [2][]byte{[]byte("x.o/"), lib}, [2][]byte{[]byte("notes.txt/"), []byte("text")}), "", 1); err != nil {
		return nil, nil, err
	}
	return cases, skipped, nil
}
