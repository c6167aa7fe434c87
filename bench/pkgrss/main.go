// Command pkgrss measures the peak RSS of `nrtabi show` on packages holding
// 1 GiB and 4 GiB of payload beside a small library (docs/packages.md#memory):
// a plain .tar whose payload is a hole on disk, and a .deb whose data.tar.zst
// decompresses to the payload (one 64 KiB random run per MiB, the rest zeros,
// so it stays under the decompression bound). Each run is under ulimit -v
// 2 GiB, as the hostile-input rule asks, its peak RSS GNU time's; the peer is GNU tar (-tvf) or
// dpkg-deb (-c) listing the same package in the same run, and the table
// prints both peaks, their ratio, and the peak against the payload.
//
//	bench/pkgrss.sh [-sizes 1,4] [-nrtabi BIN] [-dir SCRATCH]
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/nrtabi/nrtabi/bench/benchenv"
	"github.com/nrtabi/nrtabi/internal/cc"
)

const (
	memLimitKiB = 2097152 // ulimit -v, as the hostile-input rule runs commands
	structName  = "pkgrss_probe"
)

func main() {
	sizes := flag.String("sizes", "1,4", "payload sizes in GiB, comma-separated")
	bin := flag.String("nrtabi", "", "the nrtabi binary to measure (default: built from this checkout)")
	scratch := flag.String("dir", "", "scratch directory (default: a new one under $TMPDIR, removed after)")
	flag.Parse()
	if err := run(*sizes, *bin, *scratch); err != nil {
		fmt.Fprintln(os.Stderr, "pkgrss:", err)
		os.Exit(1)
	}
}

func run(sizes, bin, dir string) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "nrtabi-pkgrss-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	if bin == "" {
		bin = filepath.Join(dir, "nrtabi")
		build := exec.Command("go", "build", "-tags", "nrtabi_release_2_31_24", "-o", bin, "./cmd/nrtabi")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build: %w", err)
		}
	}
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		return fmt.Errorf("/usr/bin/time (GNU time, Debian's time package) measures the peak RSS: %w", err)
	}
	lib, err := library(dir)
	if err != nil {
		return err
	}
	fmt.Printf("pkgrss: %s, nproc %s, load %s, ulimit -v %d KiB\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), benchenv.NProc(), benchenv.LoadAvg(), memLimitKiB)
	fmt.Println("| package | payload | file size | nrtabi exit | nrtabi s | nrtabi peak RSS | peer | peer peak RSS | nrtabi / peer | peak / payload |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|")
	for _, s := range strings.Split(sizes, ",") {
		gib, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || gib <= 0 {
			return fmt.Errorf("-sizes %q: GiB counts", sizes)
		}
		payload := int64(gib) << 30
		for _, kind := range []string{"tar", "deb"} {
			p := filepath.Join(dir, fmt.Sprintf("pkg-%dG.%s", gib, kind))
			peer := []string{"tar", "-tvf", p}
			if kind == "tar" {
				err = plainTar(p, lib, payload)
			} else {
				err = debZstd(p, lib, payload)
				peer = []string{"dpkg-deb", "-c", p}
			}
			if err != nil {
				return err
			}
			st, err := os.Stat(p)
			if err != nil {
				return err
			}
			rc, secs, rss, msg := measure(bin, "show", structName, p)
			if rc != 0 {
				fmt.Fprintf(os.Stderr, "pkgrss: %s: nrtabi exit %d: %s\n", p, rc, msg)
			}
			_, _, peerRSS, _ := measure(peer[0], peer[1:]...)
			fmt.Printf("| %s | %d GiB | %s | %d | %.1f | %s | %s | %s | %.2fx | %.4f |\n", kind, gib, mib(st.Size()), rc, secs, mib(rss), peer[0], mib(peerRSS), float64(rss)/float64(max(peerRSS, 1)), float64(rss)/float64(payload))
			os.Remove(p)
		}
	}
	return nil
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// measure runs the command under ulimit -v and returns its exit status,
// wall seconds, peak RSS (bytes) and the last line it wrote to stderr. The
// peak is GNU time's (%M): the rusage of a child Go starts would not do,
// as Linux carries ru_maxrss across exec and Go's child starts from this
// process's own pages (vfork), so every child would seem at least as large
// as the bench.
func measure(name string, args ...string) (int, float64, int64, string) {
	out, err := os.CreateTemp("", "pkgrss-time-")
	if err != nil {
		return -1, 0, 0, err.Error()
	}
	out.Close()
	defer os.Remove(out.Name())
	sh := fmt.Sprintf(`ulimit -v %d; exec /usr/bin/time -q -f %%M -o %s "$0" "$@" >/dev/null`, memLimitKiB, out.Name())
	cmd := exec.Command("sh", append([]string{"-c", sh, name}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	secs := time.Since(start).Seconds()
	rc := 0
	if ee, ok := err.(*exec.ExitError); ok {
		rc = ee.ExitCode()
	} else if err != nil {
		return -1, secs, 0, err.Error()
	}
	b, _ := os.ReadFile(out.Name())
	f := strings.Fields(string(b))
	var kib int64
	if len(f) > 0 {
		kib, _ = strconv.ParseInt(f[len(f)-1], 10, 64)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	return rc, secs, kib << 10, lines[len(lines)-1]
}

// library is a small shared object with DWARF, defining structName.
func library(dir string) ([]byte, error) {
	if err := cc.Available(); err != nil {
		return nil, err
	}
	src := "struct " + structName + " { int a; long b; char c[24]; } pkgrss_v;\n"
	if err := os.WriteFile(filepath.Join(dir, "p.c"), []byte(src), 0o644); err != nil {
		return nil, err
	}
	if err := cc.Shared(dir, "libp.so", "libp.so", "", []string{"p.c"}); err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(dir, "libp.so"))
}

// plainTar writes a tar of the library and a payload member of n zero bytes,
// the payload a hole on disk (seeked over, never written).
func plainTar(path string, lib []byte, n int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	if err := tw.WriteHeader(&tar.Header{Name: "./usr/lib/libp.so", Mode: 0o644, Size: int64(len(lib)), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	tw.Write(lib)
	if err := tw.WriteHeader(&tar.Header{Name: "./usr/share/pkgrss/payload.bin", Mode: 0o644, Size: n, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	tw.Flush()
	at, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	// The member's zeros, then the end marker's two zero blocks: holes.
	return f.Truncate(at + (n+511)&^511 + 1024)
}

// payload is n bytes: a 64 KiB random run at the start of every MiB, the
// rest zeros.
type payload struct {
	n, at int64
	rng   *rand.ChaCha8
}

func (p *payload) Read(b []byte) (int, error) {
	if p.at >= p.n {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), p.n-p.at)]
	for i := 0; i < len(b); {
		off := (p.at + int64(i)) % (1 << 20)
		run := min(int64(len(b)-i), 1<<20-off)
		if off < 64<<10 {
			run = min(run, 64<<10-off)
			p.rng.Read(b[i : i+int(run)])
		} else {
			clear(b[i : i+int(run)])
		}
		i += int(run)
	}
	p.at += int64(len(b))
	return len(b), nil
}

// debZstd writes a .deb whose data.tar.zst holds the library and the
// payload.
func debZstd(path string, lib []byte, n int64) error {
	data, err := os.CreateTemp(filepath.Dir(path), "data-*.tar.zst")
	if err != nil {
		return err
	}
	defer os.Remove(data.Name())
	defer data.Close()
	zw, err := zstd.NewWriter(data, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(true))
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: "./usr/lib/libp.so", Mode: 0o644, Size: int64(len(lib)), Typeflag: tar.TypeReg})
	tw.Write(lib)
	tw.WriteHeader(&tar.Header{Name: "./usr/share/pkgrss/payload.bin", Mode: 0o644, Size: n, Typeflag: tar.TypeReg})
	if _, err := io.Copy(tw, &payload{n: n, rng: rand.NewChaCha8([32]byte{1})}); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	var ctl bytes.Buffer
	gz := gzip.NewWriter(&ctl)
	ctw := tar.NewWriter(gz)
	control := []byte("Package: pkgrss\nVersion: 1\nArchitecture: amd64\nMaintainer: bench <b@example.invalid>\nDescription: payload\n")
	ctw.WriteHeader(&tar.Header{Name: "./control", Mode: 0o644, Size: int64(len(control)), Typeflag: tar.TypeReg})
	ctw.Write(control)
	ctw.Close()
	gz.Close()
	size, err := data.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if _, err := data.Seek(0, io.SeekStart); err != nil {
		return err
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	defer out.Close()
	member := func(name string, n int64) {
		fmt.Fprintf(out, "%-16s%-12d%-6d%-6d%-8s%-10d`\n", name, 0, 0, 0, "100644", n)
	}
	io.WriteString(out, "!<arch>\n")
	member("debian-binary", 4)
	io.WriteString(out, "2.0\n")
	member("control.tar.gz", int64(ctl.Len()))
	out.Write(ctl.Bytes())
	if ctl.Len()%2 == 1 {
		io.WriteString(out, "\n")
	}
	member("data.tar.zst", size)
	if _, err := io.Copy(out, data); err != nil {
		return err
	}
	if size%2 == 1 {
		io.WriteString(out, "\n")
	}
	return out.Close()
}
