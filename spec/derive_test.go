package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDerivedRelease(t *testing.T) {
	s, err := Load("2.32.0-synthetic")
	if err != nil {
		t.Fatal(err)
	}
	if s.Release.DerivedFrom != "2.31.24" || len(s.Forward) != 38 {
		t.Fatalf("derived_from %q, %d forward rows", s.Release.DerivedFrom, len(s.Forward))
	}
	if c := s.ConstantByName("NCCOM_COMPAT_ID"); c == nil || c.Value != int64(90) {
		t.Errorf("compat id %+v, want the override 90", c)
	}
	if st := s.StructByName("enc_nccl_comm_node"); st.Size != 96 || !strings.HasPrefix(st.Pos.File, "spec/2.32.0-synthetic/") {
		t.Errorf("node: %d bytes from %s", st.Size, st.Pos.File)
	}
	// Inherited rows keep their parent positions, in the parent's order.
	if r := s.Reverse[0]; r.Name != "nec_inc_semaphore" || !strings.HasPrefix(r.Pos.File, "spec/2.31.24/reverse.toml") || r.Pos.Line == 0 {
		t.Errorf("first reverse row %s at %s", r.Name, r.Pos)
	}
	if s.ByIndex()[37].Name != "neuronNetGetProperties" {
		t.Errorf("dlsym #37 is %s", s.ByIndex()[37].Name)
	}
}

// writeChild makes a release derived from 2.31.24 next to nothing else.
func writeChild(t *testing.T, root, name string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(root, name)
	os.MkdirAll(dir, 0o755)
	for f, body := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// releaseTOML is a derived release's [release] table.
func releaseTOML(name, parent string) string {
	return "[release]\nname = \"" + name + "\"\nderived_from = \"" + parent + "\"\nconf = \"HIGH\"\nsource = \"test\"\n"
}

func TestRemove(t *testing.T) {
	root := t.TempDir()
	dir := writeChild(t, root, "3.0.0", map[string]string{"release.toml": releaseTOML("3.0.0", "2.31.24") + `
[counts]
forward = 36
reverse_nec = 16
reverse_nrt = 4
conf = "HIGH"
source = "test"

[slot_table]
base = 0xc967c0
top = 0xc968d8
stride = 8
order = "descending"
conf = "HIGH"
source = "test"

[remove]
forward = ["neuronNetCloseListen"]
`})
	s, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Forward) != 36 || s.ForwardByName("neuronNetCloseListen") != nil {
		t.Errorf("%d forward rows after removing one", len(s.Forward))
	}

	// Removing a row the parent does not have is an error at the [remove] table.
	os.WriteFile(filepath.Join(dir, "more.toml"), []byte("[remove]\nstruct = [\"no_such_struct\"]\n"), 0o644)
	_, err = LoadDir(dir)
	var errs Errors
	if !errors.As(err, &errs) || !strings.Contains(errs.Error(), `[derive] [remove] struct = "no_such_struct": release 2.31.24 has no such row`) {
		t.Errorf("got %v", err)
	}
}

func TestDeriveLoop(t *testing.T) {
	root := t.TempDir()
	writeChild(t, root, "a", map[string]string{"release.toml": releaseTOML("a", "b")})
	writeChild(t, root, "b", map[string]string{"release.toml": releaseTOML("b", "a")})
	_, err := LoadDir(filepath.Join(root, "a"))
	if err == nil || !strings.Contains(err.Error(), "derivation loops: a -> b -> a") {
		t.Errorf("got %v", err)
	}
}

// TestChildErrorPosition: a fault in a derived release's own file points there.
func TestChildErrorPosition(t *testing.T) {
	root := t.TempDir()
	dir := writeChild(t, root, "3.0.1", map[string]string{
		"release.toml": releaseTOML("3.0.1", "2.31.24"),
		"s.toml":       "[[constant]]\nname = \"NCCOM_COMPAT_ID\"\ntype = \"u32\"\nvalue = -1\nconf = \"HIGH\"\nsource = \"test\"\n",
	})
	_, err := LoadDir(dir)
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 1 || filepath.Base(errs[0].Pos.File) != "s.toml" || errs[0].Pos.Line != 4 {
		t.Errorf("got %v", err)
	}
}
