package gen

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/spec"
)

// older is the embedded release that lacks nrt_instance_info_t.arch_name,
// device_revision and enc_nccl_comm_node.context_id.
const older = "2.20.0-synthetic"

// generatePair generates 2.31.24 and the older release as the tree does:
// with the presence accessors of both, each into its own directory.
func generatePair(t *testing.T) (newer, old string) {
	t.Helper()
	specs := []*spec.Spec{mustLoad(t, spec.Default), mustLoad(t, older)}
	outs, err := Releases(t.TempDir(), specs, spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs[:2] {
		if err := Write(o.Dir, o.Files); err != nil {
			t.Fatal(err)
		}
	}
	return outs[0].Dir, outs[1].Dir
}

// TestPresenceAccessors: the field some release lacks has Has/Get/Set in
// both releases' mirrors, true where the release has it and false where it
// does not; the mirror of the release without it has no such Go field, and
// its C header no such member, with 0 for its NRTABI_HAS_ macro.
func TestPresenceAccessors(t *testing.T) {
	newer, old := generatePair(t)
	read := func(dir, f string) string {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		dir, has string
		goField  bool
	}{{newer, "true", true}, {old, "false", false}} {
		g := read(tc.dir, "abi/zstructs.go")
		for _, want := range []string{
			"func (v *NRTInstanceInfo) HasArchName() bool ",
			"func (v *NRTInstanceInfo) GetDeviceRevision() (x [8]byte, ok bool) ",
			"func (v *EncNcclCommNode) SetContextID(x uint32) bool ",
			"func (v *EncNcclCommNode) HasContextID() bool                { return " + tc.has + " }",
		} {
			if !strings.Contains(g, want) {
				t.Errorf("%s: zstructs.go lacks %q", tc.dir, want)
			}
		}
		if strings.Contains(g, "func (v *EncNcclCommNode) GetContextID() uint32") {
			t.Errorf("%s: context_id keeps its plain Get accessor beside the presence one", tc.dir)
		}
		if got := strings.Contains(g, "\tArchName "); got != tc.goField {
			t.Errorf("%s: Go field ArchName declared %v, want %v", tc.dir, got, tc.goField)
		}
		h := read(tc.dir, "c/"+HeaderName)
		bit := map[bool]string{true: "1", false: "0"}[tc.goField]
		for _, m := range []string{"NRTABI_HAS_NRT_INSTANCE_INFO_T_ARCH_NAME", "NRTABI_HAS_NRT_INSTANCE_INFO_T_DEVICE_REVISION", "NRTABI_HAS_ENC_NCCL_COMM_NODE_CONTEXT_ID"} {
			if !strings.Contains(h, "#define "+m+" "+bit+" ") {
				t.Errorf("%s: header lacks #define %s %s", tc.dir, m, bit)
			}
		}
		if got := strings.Contains(h, "char arch_name[16];"); got != tc.goField {
			t.Errorf("%s: C member arch_name declared %v, want %v", tc.dir, got, tc.goField)
		}
	}
	h := read(old, "c/"+HeaderName)
	for _, want := range []string{"_Static_assert(sizeof(struct nrt_instance_info) == 8,", "_Static_assert(sizeof(struct enc_nccl_comm_node) == 80,"} {
		if !strings.Contains(h, want) {
			t.Errorf("the older release's header does not assert the vendor's size: no %q", want)
		}
	}
}

// TestAbsentLayoutCompiles compiles the older release's generated C with
// gcc (its asserts hold the 8- and 80-byte layouts) together with a unit
// that reads its presence macros, and builds and runs its Go mirror's layout
// test.
func TestAbsentLayoutCompiles(t *testing.T) {
	needCC(t)
	newer, old := generatePair(t)
	if err := compileC(old); err != nil {
		t.Fatalf("the older release's C does not compile: %v", err)
	}
	for dir, want := range map[string]string{newer: "1", old: "0"} {
		tu := "#define _GNU_SOURCE\n#include \"" + HeaderName + "\"\n" +
			"#if NRTABI_HAS_NRT_INSTANCE_INFO_T_ARCH_NAME != " + want + " || NRTABI_HAS_ENC_NCCL_COMM_NODE_CONTEXT_ID != " + want + "\n#error presence\n#endif\n" +
			"#if NRTABI_HAS_NRT_INSTANCE_INFO_T_ARCH_NAME\n_Static_assert(sizeof(nrt_instance_info_t) == 32, \"with arch_name\");\n" +
			"#else\n_Static_assert(sizeof(nrt_instance_info_t) == 8, \"the vendor's 8 bytes\");\n#endif\nint main(void) { return 0; }\n"
		c := filepath.Join(dir, "c")
		if err := os.WriteFile(filepath.Join(c, "presence.c"), []byte(tu), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := cc.Object(c, "presence.c", "presence.o", cc.Strict...); err != nil {
			t.Errorf("%s: %v", dir, err)
		}
	}
	out, err := buildGo(old)
	if err != nil {
		t.Fatalf("the older release's Go mirror: %v\n%s", err, out)
	}
}

// TestAbsentUseRefused plants hand-written code that names fields the older
// release lacks directly, and sees generation refuse each use site in one
// line naming the file:line, the field, the release and what to use.
func TestAbsentUseRefused(t *testing.T) {
	tmp := t.TempDir()
	src := "package x\n\nimport \"github.com/nrtabi/nrtabi/generated/abi\"\n\n" +
		"func f(i *abi.NRTInstanceInfo) { i.ArchName[0] = 1 }\n\n" +
		"func g(n *abi.EncNcclCommNode) uint32 { return n.ContextID }\n\n" +
		"func h(n *abi.EncNcclCommNode) bool { return n.HasContextID() }\n"
	if err := os.MkdirAll(filepath.Join(tmp, "runtime", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "runtime", "x", "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	uses, err := scanHandUses(tmp)
	if err != nil {
		t.Fatal(err)
	}
	specs := []*spec.Spec{mustLoad(t, spec.Default), mustLoad(t, older)}
	err = checkHandUses(specs, uses)
	var r *Refusal
	if !errors.As(err, &r) {
		t.Fatalf("direct uses of absent fields: %v, want a refusal", err)
	}
	want := []string{
		"runtime/x/x.go:5: names ArchName directly, but nrt_instance_info_t.arch_name is absent in 2.20.0-synthetic (spec/2.20.0-synthetic/structs.toml:",
		"runtime/x/x.go:7: names ContextID directly, but enc_nccl_comm_node.context_id is absent in 2.20.0-synthetic (spec/2.20.0-synthetic/structs.toml:",
	}
	if len(r.Lines) != len(want) {
		t.Fatalf("%d lines, want %d (one per use site):\n%s", len(r.Lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(r.Lines[i], w) || strings.Contains(r.Lines[i], "\n") {
			t.Errorf("line %d: %q\nwant one line starting %q", i, r.Lines[i], w)
		}
	}
	if !strings.Contains(r.Lines[0], "; use HasArchName/GetArchName/SetArchName here") {
		t.Errorf("the line does not name the accessors to use: %s", r.Lines[0])
	}

	// The runtime as it is goes through the accessors: nothing refused.
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	if uses, err = scanHandUses(root); err != nil {
		t.Fatal(err)
	}
	if err := checkHandUses(specs, uses); err != nil {
		t.Errorf("the tree's hand-written code is refused:\n%v", err)
	}
	for _, n := range []string{"GetArchName", "SetArchName", "GetDeviceRevision", "HasContextID", "SetContextID"} {
		if len(uses.sitesOf(n)) == 0 {
			t.Errorf("the runtime does not use %s: the scan or the runtime changed", n)
		}
	}
}

// TestGoneWithoutAbsentRow: a release that drops a field the runtime uses
// without an absent row is refused once per use site, each line offering
// both choices (mark it absent, or a was row).
func TestGoneWithoutAbsentRow(t *testing.T) {
	s := plantRelease(t, t.TempDir(), "9.4.0", map[string]func([]spec.Field) []spec.Field{"enc_nccl_comm_node": func(fs []spec.Field) []spec.Field {
		for i := range fs {
			if fs[i].Name == "context_id" {
				fs[i].Name = "ctx" // the slot is kept: only the name is gone
			}
		}
		return fs
	}})
	uses := handUses{named: map[string]string{"SetContextID": "runtime/collectives/pool.go:67"},
		sites:     map[string][]string{"SetContextID": {"runtime/collectives/pool.go:67"}, "HasContextID": {"runtime/collectives/pool.go:66"}},
		mentioned: map[string]bool{"EncNcclCommNode": true}}
	err := checkHandUses([]*spec.Spec{mustLoad(t, spec.Default), s}, uses)
	var r *Refusal
	if !errors.As(err, &r) || len(r.Lines) != 2 {
		t.Fatalf("got %v, want two lines (one per use site)", err)
	}
	for _, l := range r.Lines {
		if !strings.HasPrefix(l, "runtime/collectives/pool.go:6") || !strings.Contains(l, "enc_nccl_comm_node.context_id (in 2.31.24) is gone from 9.4.0; either mark it absent there (a [[struct.absent]] row name = \"context_id\", type = \"u32\"") ||
			!strings.Contains(l, `add was = "context_id" to that field's row`) {
			t.Errorf("line %q", l)
		}
	}
}

// TestAbsentTypeMismatch: an absent row whose type is not the field's type
// where present is refused in one line naming both rows.
func TestAbsentTypeMismatch(t *testing.T) {
	base := mustLoad(t, spec.Default)
	o := *mustLoad(t, older)
	o.Structs = append([]*spec.Struct(nil), o.Structs...)
	for i, st := range o.Structs {
		if st.Name == "nrt_instance_info_t" {
			c := *st
			c.Absent = append([]spec.AbsentField(nil), st.Absent...)
			at, err := spec.ParseType("char[32]")
			if err != nil {
				t.Fatal(err)
			}
			c.Absent[0].Type, c.Absent[0].T = "char[32]", at
			o.Structs[i] = &c
		}
	}
	_, err := presenceOf([]*spec.Spec{base, &o})
	var r *Refusal
	if !errors.As(err, &r) || len(r.Lines) != 1 || !strings.Contains(r.Lines[0], "nrt_instance_info_t.arch_name is char[16] in 2.31.24, but the absent row at ") ||
		!strings.Contains(r.Lines[0], " has char[32]; the presence accessors have one type in every release") {
		t.Fatalf("got %v", err)
	}
}
