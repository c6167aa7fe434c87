package layoutcheck

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/spec"
)

// TestExtractRoundTrip: a fragment extracted from an object built from the
// generated header loads with spec.LoadDir, and checking the object against
// it is clean.
func TestExtractRoundTrip(t *testing.T) {
	f := loadFixtures(t)
	var names []string
	for _, st := range f.sp.Structs {
		names = append(names, st.Name)
	}
	var buf bytes.Buffer
	if err := release.Extract(f.libnrt, &buf, release.ExtractOptions{Names: names, Spec: f.sp}); err != nil {
		t.Fatal(err)
	}
	obj, err := elfread.Open(f.libnrt)
	if err != nil {
		t.Fatal(err)
	}
	id := obj.BuildID
	obj.Close()
	text := buf.String()
	if !strings.Contains(text, "nrtabi extract from "+f.libnrt+" (build-id "+id+")") {
		t.Fatalf("provenance must name the file and build-id %s:\n%.600s", id, text)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "structs.toml"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	frag, err := spec.LoadDir(dir)
	if err != nil {
		t.Fatalf("the extracted fragment does not load: %v\n%s", err, text)
	}
	if !frag.IsFragment() {
		t.Fatal("an extracted spec must be a struct fragment")
	}
	for _, st := range f.sp.Structs {
		got := frag.StructByName(st.Name)
		if got == nil || got.Size != st.Size {
			t.Fatalf("fragment lacks %s or has the wrong size: %+v", st.Name, got)
		}
	}
	r := runCheck(t, f, Options{Structs: frag, StructsSrc: dir}, f.libnrt)
	if r.Exit != 0 {
		var b bytes.Buffer
		r.WriteText(&b)
		t.Fatalf("round trip not clean:\n%s", b.String())
	}
	// And the fragment still catches a fault in another build.
	obj2 := f.faultObject(t, "roundtrip-moved", "\tuint32_t pod_sz; /* +40 HIGH */\n", "\tuint16_t pod_sz;\n")
	r = runCheck(t, f, Options{Structs: frag, StructsSrc: dir}, obj2)
	expect(t, r, KindFieldSize, Incompatible, "enc_glb_comm.pod_sz: size 2 B, spec 4 B")
}

// TestExtractCovers: members the grammar cannot spell become opaque ranges
// that name them, so checking against the fragment stays clean.
func TestExtractCovers(t *testing.T) {
	f := loadFixtures(t)
	obj := f.faultObject(t, "covers", "\tuint32_t pod_sz; /* +40 HIGH */\n", "\tuint32_t pod_sz : 20;\n\tuint32_t pod_flags : 12;\n")
	var buf bytes.Buffer
	if err := release.Extract(obj, &buf, release.ExtractOptions{Names: []string{"enc_glb_comm"}, Spec: f.sp}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `covers = ["pod_sz", "pod_flags"]`) {
		t.Fatalf("the two bitfields must become one opaque range covering both:\n%s", buf.String())
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.toml"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	frag, err := spec.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r := runCheck(t, f, Options{Structs: frag, StructsSrc: dir}, obj); r.Exit != 0 {
		t.Fatalf("exit %d: %+v", r.Exit, r.Findings)
	}
}
