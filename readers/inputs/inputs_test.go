package inputs

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// tree builds a walk corpus: ELF-magic files (the walk only reads the
// magic), a non-ELF file, a FIFO, a nested directory, a symbolic link out
// of the tree, a loop, a link to a directory of the tree, a dangling link
// and a link to a file of the tree.
func tree(t *testing.T) (dir, outside string) {
	t.Helper()
	base := t.TempDir()
	dir, outside = filepath.Join(base, "tree"), filepath.Join(base, "outside.so")
	elf := []byte("\x7fELF\x02\x01\x01rest")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "sub", "deeper"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "b.so"), elf, 0o644))
	must(os.WriteFile(filepath.Join(dir, "a.so"), elf, 0o644))
	must(os.WriteFile(filepath.Join(dir, "README"), []byte("text\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "sub", "deeper", "c.so.1"), elf, 0o644))
	must(os.WriteFile(outside, elf, 0o644))
	must(syscall.Mkfifo(filepath.Join(dir, "sub", "fifo"), 0o644))
	must(os.Symlink(outside, filepath.Join(dir, "out.so")))
	must(os.Symlink("loop2", filepath.Join(dir, "loop1")))
	must(os.Symlink("loop1", filepath.Join(dir, "loop2")))
	must(os.Symlink("..", filepath.Join(dir, "sub", "up")))
	must(os.Symlink("gone.so", filepath.Join(dir, "dangling.so")))
	must(os.Symlink("sub/deeper/c.so.1", filepath.Join(dir, "c.so")))
	return dir, outside
}

func TestExpandWalk(t *testing.T) {
	dir, _ := tree(t)
	ins, err := Expand([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range ins {
		name := strings.TrimPrefix(in.Name, dir+"/")
		if in.Skip != "" {
			name += " SKIP " + strings.ReplaceAll(in.Skip, filepath.Dir(dir), "BASE")
		}
		got = append(got, name)
	}
	want := []string{
		"README SKIP not an ELF file (starts with \"text\")",
		"a.so",
		"b.so",
		"c.so",
		"dangling.so SKIP dangling symbolic link, not followed",
		"loop1 SKIP symbolic link loop, not followed",
		"loop2 SKIP symbolic link loop, not followed",
		"out.so SKIP symbolic link out of BASE/tree, not followed",
		"sub/deeper/c.so.1 SKIP the same file as BASE/tree/c.so (one device and inode), read once",
		"sub/fifo SKIP is a FIFO, not a regular file",
		"sub/up SKIP symbolic link to a directory of the tree, not followed",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("walk:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The link to a file of the tree is read through its target, named as walked.
	for _, in := range ins {
		if strings.HasSuffix(in.Name, "/c.so") && !strings.HasSuffix(in.Path, "sub/deeper/c.so.1") {
			t.Errorf("c.so: Path %q, want the link's target", in.Path)
		}
	}
}

// An error reading a walked link names the link, not its target.
func TestLinkErrorNamesLink(t *testing.T) {
	dir, _ := tree(t)
	ins, err := Expand([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range ins {
		if strings.HasSuffix(in.Name, "/c.so") {
			if _, err := in.Open(); err == nil || !strings.HasPrefix(err.Error(), in.Name+": ") {
				t.Fatalf("error %v, want it to name %s", err, in.Name)
			}
			return
		}
	}
	t.Fatal("no c.so in the walk")
}

func TestExpandFail(t *testing.T) {
	dir, _ := tree(t)
	_, err := Expand([]string{dir}, Options{NonELF: NonELFFail})
	if err == nil || !strings.Contains(err.Error(), "README: not an ELF file") || !strings.Contains(err.Error(), "--non-elf skip") {
		t.Fatalf("--non-elf fail: %v, want the README named", err)
	}
	// A link out of the tree is listed, never a failure by itself.
	os.Remove(filepath.Join(dir, "README"))
	os.Remove(filepath.Join(dir, "sub", "fifo"))
	for _, n := range []string{"loop1", "loop2", "dangling.so"} {
		os.Remove(filepath.Join(dir, n))
	}
	if _, err := Expand([]string{dir}, Options{NonELF: NonELFFail}); err != nil {
		t.Fatalf("links not followed must not fail the run: %v", err)
	}
	if _, err := Expand([]string{dir}, Options{NonELF: "maybe"}); err == nil || !strings.Contains(err.Error(), "use skip or fail") {
		t.Fatalf("--non-elf maybe: %v", err)
	}
}

// A file named on the command line is an input whatever it holds: its
// errors come when it is read, as before many inputs.
func TestExpandExplicitFile(t *testing.T) {
	dir, _ := tree(t)
	p := filepath.Join(dir, "README")
	ins, err := Expand([]string{p, filepath.Join(dir, "a.so")}, Options{NonELF: NonELFFail})
	if err != nil || len(ins) != 2 || ins[0].Path != p || ins[0].Skip != "" {
		t.Fatalf("explicit: %+v, %v", ins, err)
	}
	if _, err := ins[0].Open(); err == nil || !strings.Contains(err.Error(), "not an ELF file") {
		t.Fatalf("opening a non-ELF file: %v", err)
	}
}

// An Expander sees every non-ELF file and its members take its place.
func TestExpander(t *testing.T) {
	dir, _ := tree(t)
	exp := func(path string, head []byte) ([]Input, bool, error) {
		if !strings.HasPrefix(string(head), "text") {
			return nil, false, nil
		}
		return []Input{{Name: path + "!/m.so", Mem: strings.NewReader("x")}}, true, nil
	}
	ins, err := Expand([]string{dir}, Options{Expand: exp})
	if err != nil {
		t.Fatal(err)
	}
	if ins[0].Name != filepath.Join(dir, "README")+"!/m.so" || ins[0].Mem == nil {
		t.Fatalf("member: %+v", ins[0])
	}
	if _, err := ins[0].Open(); err == nil || !strings.HasPrefix(err.Error(), ins[0].Name+": ") {
		t.Fatalf("a member's error must name it: %v", err)
	}
}

func TestExpandUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: a mode-000 file is readable, so there is no unreadable file to plant (the FIFO case of TestExpandWalk covers an entry that cannot be read)")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "secret.so")
	if err := os.WriteFile(p, []byte("\x7fELF"), 0); err != nil {
		t.Fatal(err)
	}
	ins, err := Expand([]string{dir}, Options{})
	if err != nil || len(ins) != 1 || !strings.Contains(ins[0].Skip, "cannot read") {
		t.Fatalf("%+v %v", ins, err)
	}
}

// TestSameFileOnce: one file reached through two names — a symbolic link
// and its target named as arguments (check build/*.so* on libnccom.so.2 ->
// libnccom.so.2.x), or a hard link — is read once; the later name is
// listed as that file, never read twice. (Before, both were inputs.)
func TestSameFileOnce(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "libnccom.so.2.31.24")
	if err := os.WriteFile(target, []byte("\x7fELF\x02\x01\x01rest"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "libnccom.so.2")
	hard := filepath.Join(dir, "hard.so")
	if err := os.Symlink(filepath.Base(target), link); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(target, hard); err != nil {
		t.Fatal(err)
	}
	ins, err := Expand([]string{link, target, hard}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	for _, in := range ins {
		if in.Skip == "" {
			read++
			continue
		}
		if in.Skip != "the same file as "+link+" (one device and inode), read once" || in.Fail {
			t.Errorf("%s: skipped as %q (fail %v)", in.Name, in.Skip, in.Fail)
		}
	}
	if read != 1 || len(ins) != 3 {
		t.Errorf("%d inputs read of %d listed, want 1 of 3: %+v", read, len(ins), ins)
	}
}
