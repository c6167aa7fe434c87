package spec

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// derivedStruct writes a release derived from 2.31.24 that restates the
// parent's struct name after edit has changed its fields, and loads it.
func derivedStruct(t *testing.T, name string, edit func(fs []Field) []Field) (*Spec, error) {
	t.Helper()
	base, err := Load("2.31.24")
	if err != nil {
		t.Fatal(err)
	}
	st := *base.StructByName(name)
	st.Fields = edit(slices.Clone(st.Fields))
	var b bytes.Buffer
	w := &Writer{W: &b}
	w.Struct(&st)
	if w.Err() != nil {
		t.Fatal(w.Err())
	}
	dir := writeChild(t, t.TempDir(), "9.9.9", map[string]string{"release.toml": releaseTOML("9.9.9", "2.31.24"), "structs.toml": b.String()})
	return LoadDir(dir)
}

func fieldIndex(fs []Field, name string) int {
	for i := range fs {
		if fs[i].Name == name {
			return i
		}
	}
	panic("no field " + name)
}

func TestStableNames(t *testing.T) {
	s, err := derivedStruct(t, "enc_glb_comm", func(fs []Field) []Field {
		fs[fieldIndex(fs, "reservation_id")].Name = "pod_id"
		fs[fieldIndex(fs, "pod_id")].Was = "reservation_id"
		return fs
	})
	if err != nil {
		t.Fatal(err)
	}
	st := s.StructByName("enc_glb_comm")
	f := st.Fields[fieldIndex(st.Fields, "pod_id")]
	if f.StableName() != "reservation_id" || f.StableTypeName() != "u64" || f.StableFrom != "2.31.24" {
		t.Errorf("pod_id: stable %q %q from %q, want reservation_id u64 from 2.31.24", f.StableName(), f.StableTypeName(), f.StableFrom)
	}
	if g := st.Fields[fieldIndex(st.Fields, "g_device_id")]; g.StableName() != "g_device_id" || g.StableFrom != "2.31.24" {
		t.Errorf("an unchanged field: stable %q from %q", g.StableName(), g.StableFrom)
	}
	// Inherited structs keep the root's names; 2.31.24 itself is the root.
	if n := s.StructByName("enc_nccl_comm_node"); n.Fields[0].StableFrom != "2.31.24" {
		t.Errorf("inherited field from %q", n.Fields[0].StableFrom)
	}
	// A new field starts its own chain.
	syn, err := Load("2.32.0-synthetic")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range syn.StructByName("enc_nccl_comm_node").Fields {
		want := "2.31.24"
		if f.Name == "comm_gen" { // the synthetic release's new u64
			want = "2.32.0-synthetic"
		}
		if f.StableFrom != want || f.StableName() != f.Name {
			t.Errorf("2.32.0-synthetic %s: stable %s from %q, want itself from %s", f.Name, f.StableName(), f.StableFrom, want)
		}
	}
}

// TestStableFaults plants each fault the was and range rows can carry and
// sees the loader name it.
func TestStableFaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(fs []Field) []Field
		want string
	}{
		{"was names no parent field", func(fs []Field) []Field {
			fs[fieldIndex(fs, "reservation_id")].Was = "reservation"
			return fs
		}, "has no field reservation"},
		{"two fields claim one stable name", func(fs []Field) []Field {
			fs[fieldIndex(fs, "reservation_id")].Name = "pod_id"
			fs[fieldIndex(fs, "pod_id")].Was = "reservation_id"
			fs[fieldIndex(fs, "routing_id")].Was = "reservation_id"
			return fs
		}, "both continue the field reservation_id"},
		{"stable name is another field's name", func(fs []Field) []Field {
			// A swap of two names: each field's stable name is the other's
			// new name, and C would declare both names twice.
			a, b := fieldIndex(fs, "reservation_id"), fieldIndex(fs, "routing_id")
			fs[a].Name, fs[a].Was = "routing_id", "reservation_id"
			fs[b].Name, fs[b].Was = "reservation_id", "routing_id"
			return fs
		}, "which another field of enc_glb_comm now has"},
		{"range is not a pair", func(fs []Field) []Field {
			fs[fieldIndex(fs, "pod_sz")].Range = []int64{0}
			return fs
		}, "is not [lo, hi]"},
		{"range upside down", func(fs []Field) []Field {
			fs[fieldIndex(fs, "pod_sz")].Range = []int64{9, 1}
			return fs
		}, "is not [lo, hi]"},
		{"range beyond the type", func(fs []Field) []Field {
			fs[fieldIndex(fs, "pod_sz")].Range = []int64{-1, 10}
			return fs
		}, "holds values its type u32 cannot"},
		{"range on a pointer", func(fs []Field) []Field {
			fs[fieldIndex(fs, "root_comm_id")].Range = []int64{0, 1}
			return fs
		}, "a value domain applies only to integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := derivedStruct(t, "enc_glb_comm", tc.edit)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), filepath.Join("9.9.9", "structs.toml")+":") {
				t.Errorf("error does not point at the row: %v", err)
			}
		})
	}
}

func TestWasInRootRelease(t *testing.T) {
	dir := writeChild(t, t.TempDir(), "root", map[string]string{"structs.toml": `
[[struct]]
name = "a"
size = 4
conf = "HIGH"
source = "test"

  [[struct.field]]
  name = "x"
  offset = 0
  type = "u32"
  was = "y"
  conf = "HIGH"
  source = "test"
`})
	_, err := LoadDir(dir)
	if err == nil || !strings.Contains(err.Error(), "derives from no release") {
		t.Fatalf("got %v", err)
	}
}

func TestIntDomain(t *testing.T) {
	for expr, want := range map[string][2]any{
		"u8": {int64(0), uint64(255)}, "i8": {int64(-128), uint64(127)}, "u64": {int64(0), ^uint64(0)},
		"int": {int64(-1 << 31), uint64(1<<31 - 1)}, "bool": {int64(0), uint64(1)}, "char": {int64(-128), uint64(127)},
	} {
		ty, err := ParseType(expr)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi, ok := ty.IntDomain()
		if !ok || lo != want[0] || hi != want[1] {
			t.Errorf("%s: [%d, %d] %v", expr, lo, hi, ok)
		}
	}
	i8, _ := ParseType("i8")
	for _, tc := range []struct {
		lo, hi int64
		fits   bool
	}{{-128, 127, true}, {-9, -2, true}, {-129, 0, false}, {0, 128, false}, {5, 1, false}} {
		if i8.RangeFits(tc.lo, tc.hi) != tc.fits {
			t.Errorf("i8 holds [%d, %d]: %v", tc.lo, tc.hi, !tc.fits)
		}
	}
	if _, _, ok := (&Type{Kind: KindPointer}).IntDomain(); ok {
		t.Error("a pointer has an integer domain")
	}
}

func TestInferWas(t *testing.T) {
	base, err := Load("2.31.24")
	if err != nil {
		t.Fatal(err)
	}
	parent := base.StructByName("enc_glb_comm")
	st := *parent
	st.Fields = slices.Clone(st.Fields)
	st.Fields[fieldIndex(st.Fields, "reservation_id")].Name = "pod_id"
	if got := InferWas(parent, &st); len(got) != 1 || got[0] != "pod_id (was reservation_id)" {
		t.Fatalf("InferWas: %v", got)
	}
	f := st.Fields[fieldIndex(st.Fields, "pod_id")]
	if f.Was != "reservation_id" || f.ConfOf("was") != Inferred || !strings.Contains(f.Note, "offset 48") {
		t.Errorf("pod_id: was %q conf %s note %q", f.Was, f.ConfOf("was"), f.Note)
	}
	if parent.Fields[fieldIndex(parent.Fields, "reservation_id")].ConfFields != nil {
		t.Error("InferWas wrote into the parent's row")
	}
	// Written and read back, the guess is a valid was row.
	s, err := derivedStruct(t, "enc_glb_comm", func([]Field) []Field { return st.Fields })
	if err != nil {
		t.Fatal(err)
	}
	if g := s.StructByName("enc_glb_comm"); g.Fields[fieldIndex(g.Fields, "pod_id")].StableName() != "reservation_id" {
		t.Error("the inferred was row does not carry the stable name")
	}
	// No guess where the old name is still there, or for a field at an
	// offset the parent's fields kept.
	st2 := *parent
	st2.Fields = slices.Clone(st2.Fields)
	st2.Fields[fieldIndex(st2.Fields, "pod_sz")].Name = "pod_size"
	st2.Fields = append(st2.Fields, Field{Name: "reservation_idx", Offset: 48, Type: "u64"})
	st2.Fields[fieldIndex(st2.Fields, "reservation_id")].Offset = 48
	got := InferWas(parent, &st2)
	if len(got) != 1 || got[0] != "pod_size (was pod_sz)" {
		t.Errorf("InferWas guessed %v, want only pod_size", got)
	}
}

func TestCarryRanges(t *testing.T) {
	base, err := Load("2.31.24")
	if err != nil {
		t.Fatal(err)
	}
	parent := base.StructByName("enc_comm")
	if f := parent.Fields[fieldIndex(parent.Fields, "stream_id")]; len(f.Range) != 2 || f.Range[1] != 3 {
		t.Fatalf("2.31.24 enc_comm.stream_id has range %v, want [0, 3] (below ENC_MAX_STREAM_N)", f.Range)
	}
	for typ, carried := range map[string]bool{"int": true, "i8": true, "u64": true, "bool": false, "u8*": false} {
		st := *parent
		st.Fields = slices.Clone(st.Fields)
		f := &st.Fields[fieldIndex(st.Fields, "stream_id")]
		f.Type, f.Range = typ, nil
		got := CarryRanges(parent, &st)
		if carried != (len(got) == 1 && len(f.Range) == 2 && slices.Contains(f.Carried, "range")) {
			t.Errorf("stream_id as %s: carried %v, range %v, carried keys %v", typ, got, f.Range, f.Carried)
		}
	}
	if parent.Fields[fieldIndex(parent.Fields, "stream_id")].Carried != nil {
		t.Error("CarryRanges wrote into the parent's row")
	}
	// A vendor's re-type to int, restated with the carried range, loads.
	s, err := derivedStruct(t, "enc_comm", func(fs []Field) []Field {
		fs[fieldIndex(fs, "stream_id")].Type = "int"
		return fs
	})
	if err != nil {
		t.Fatal(err)
	}
	if f := s.StructByName("enc_comm").Fields[fieldIndex(s.StructByName("enc_comm").Fields, "stream_id")]; f.StableTypeName() != "u32" || len(f.Range) != 2 {
		t.Errorf("stream_id as int: stable type %s, range %v", f.StableTypeName(), f.Range)
	}
}
