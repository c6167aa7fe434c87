package pkgfile

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/hostile"
)

// TestCrafted: internal/hostile's crafted packages. Each format's own
// integrity check is enforced even where it sits after the tar's end
// marker (gzip's CRC-32 trailer, xz's block check, zstd's content checksum,
// bzip2's block CRC), in a plain .tar.* and in a .deb's data.tar.*, one
// line naming the package and the format; and inputs as tools ship them
// are read: a zstd stream opening with a skippable frame (pzstd), two xz
// streams back to back, glibc's empty libanl.a stub (an empty static
// library, no error) and a static library of one object (lib.a!x.o).
// (Before, every bad check was read as good, and the four inputs as they
// ship were refused.)
func TestCrafted(t *testing.T) {
	cases, skipped, err := hostile.PackageCases(t.TempDir(), fakeELF("lib"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range skipped {
		t.Logf("not run: %s", s)
	}
	for _, c := range cases {
		p, err := Open(c.Path)
		switch {
		case c.Want == "" && err != nil:
			t.Errorf("%s: want it read, got %v", c.Name, err)
		case c.Want == "" && len(p.Members) != c.Members:
			t.Errorf("%s: %d ELF members (%q), want %d", c.Name, len(p.Members), names(p), c.Members)
		case c.Want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.Path+": ") || !strings.Contains(err.Error(), c.Want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s: want one line naming it and %q, got %v", c.Name, c.Want, err)
		}
	}
	p, err := Open(filepath.Join(filepath.Dir(cases[0].Path), "libx.a"))
	if err != nil || len(p.Members) != 1 || names(p)[0] != p.Path+"!x.o" {
		t.Errorf("static library: want its one object named LIB.a!x.o, got %v", err)
	}
}

// TestRPMPayloadCheck: an .rpm's gzip payload with a bad CRC-32 trailer,
// which follows cpio's TRAILER!!! entry, is refused by name.
func TestRPMPayloadCheck(t *testing.T) {
	good := rpmOf(t, "gzip", cpioOf(usual()[1:]...))
	if _, err := Read("p.rpm", good); err != nil {
		t.Fatalf("good payload: %v", err)
	}
	bad := append([]byte(nil), good...)
	bad[len(bad)-8] ^= 0xff // the payload ends the file: its CRC-32
	if _, err := Read("p.rpm", bad); err == nil || !strings.Contains(err.Error(), "p.rpm: the gzip stream fails its own integrity check") {
		t.Errorf("bad trailer: want refused by name, got %v", err)
	}
}

// TestPzstd: a tar compressed by pzstd(1) itself, whose frames each follow
// a skippable frame, is read.
func TestPzstd(t *testing.T) {
	if _, err := exec.LookPath("pzstd"); err != nil {
		t.Skip("skipping: pzstd not found (the zstd package ships it)")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "p.tar")
	if err := os.WriteFile(src, tarOf(t, usual()...), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("pzstd", "-q", "-p", "2", src).CombinedOutput(); err != nil {
		t.Fatalf("pzstd: %v\n%s", err, out)
	}
	head, _ := os.ReadFile(src + ".zst")
	if len(head) < 4 || head[0]&0xf0 != 0x50 {
		t.Logf("pzstd wrote no skippable frame first (%x): the crafted case in TestCrafted holds it", head[:min(len(head), 4)])
	}
	p, err := Open(src + ".zst")
	if err != nil || len(p.Members) != 2 {
		t.Errorf("pzstd output: %v", err)
	}
}
