package layoutcheck

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nrtabi/nrtabi/release"
)

const rustSource = `pub trait Speak { fn speak(&self) -> u32; }
pub struct Dog { pub legs: u32, pub name: &'static str }
impl Speak for Dog { fn speak(&self) -> u32 { self.legs } }
pub struct Holder { pub s: Box<dyn Speak>, pub n: u64, pub arr: [*const u8; 4] }
#[no_mangle]
pub fn make() -> Holder { Holder { s: Box::new(Dog { legs: 4, name: "x" }), n: 1, arr: [std::ptr::null(); 4] } }
`

// TestRust: rustc's DWARF (namespaced names, a trait object's fat pointer
// to the zero-sized "dyn Trait" and its vtable) extracts to a fragment that
// loads and checks clean; show --c compiles.
func TestRust(t *testing.T) {
	rustc, err := exec.LookPath("rustc")
	if err != nil {
		t.Skip("skipping: no rustc on PATH (the Rust DWARF case needs it)")
	}
	dir := t.TempDir()
	if err := writeFile(dir, "rv.rs", rustSource); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(rustc, "--crate-type=lib", "--emit=obj", "-g", "-C", "opt-level=0", "rv.rs", "-o", "rv.o")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("rustc: %v\n%s", err, out)
	}
	obj := filepath.Join(dir, "rv.o")
	var b bytes.Buffer
	if err := release.Extract(obj, &b, release.ExtractOptions{Names: []string{"rv::Holder", "rv::Dog"}, DebugDirs: []string{t.TempDir()}}); err != nil {
		t.Fatal(err)
	}
	frag := loadFragment(t, b.String())
	if frag.StructByName("rv::Holder") == nil || frag.StructByName("rv::Dog") == nil {
		t.Fatalf("rv::Holder and rv::Dog must be written:\n%s", b.String())
	}
	if r := gradingCheck(t, frag, obj); len(r.Findings) != 0 {
		t.Fatalf("extract -> check not clean: %+v", r.Findings)
	}
	b.Reset()
	if _, err := Show(context.Background(), obj, "rv::Holder", ShowOptions{DebugDirs: []string{t.TempDir()}, C: true}, &b); err != nil {
		t.Fatal(err)
	}
	if err := showCCompile(t, b.String()); err != nil {
		t.Fatalf("show --c rv::Holder: %v\n%s", err, b.String())
	}
}
