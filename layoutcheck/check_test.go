package layoutcheck

import (
	"context"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
)

func runCheck(t *testing.T, f *fixtures, opt Options, files ...string) *Report {
	t.Helper()
	if opt.Spec == nil {
		opt.Spec = f.sp
	}
	if opt.StructsSrc == "" {
		opt.StructsSrc = "spec/" + f.sp.Release.Name
	}
	if opt.DebugDirs == nil {
		opt.DebugDirs = []string{t.TempDir()}
	}
	r, err := Check(context.Background(), files, opt)
	if err != nil {
		t.Fatalf("check %v: %v", files, err)
	}
	return r
}

// expect asserts that the report holds a finding of the kind whose message
// contains want, and that the exit status carries the finding's bit.
// expect finds a fact or a consequence folded under one (the struct's
// size under the member that changed it).
func expect(t *testing.T, r *Report, kind string, sev Severity, want string) {
	t.Helper()
	var all []Finding
	for _, f := range r.Findings {
		f.Walk(func(c Finding, _ int) { all = append(all, c) })
	}
	for _, f := range all {
		if f.Kind == kind && f.Severity == sev && strings.Contains(f.Message, want) {
			if r.Exit&int(sev) == 0 {
				t.Errorf("finding %q present but exit %d lacks bit %d", f.Message, r.Exit, sev)
			}
			t.Logf("caught: %s [%s, %s] exit %d", f.Message, f.Kind, f.Severity, r.Exit)
			return
		}
	}
	var got []string
	for _, f := range all {
		got = append(got, f.Kind+"/"+f.Severity.String()+": "+f.Message)
	}
	t.Fatalf("no %s %s finding containing %q; exit %d; findings:\n  %s", sev, kind, want, r.Exit, strings.Join(got, "\n  "))
}

func TestCleanObjectAllStructs(t *testing.T) {
	f := loadFixtures(t)
	r := runCheck(t, f, Options{}, f.typesObj)
	if r.Exit != 0 || len(r.Findings) != 0 {
		t.Fatalf("clean object: exit %d, findings %+v", r.Exit, r.Findings)
	}
	if len(r.Absent) != 0 || len(r.Files[0].Structs) != len(f.sp.Structs) {
		t.Fatalf("found %d of %d structs; absent %v", len(r.Files[0].Structs), len(f.sp.Structs), r.Absent)
	}
}

func TestCleanLinkedPair(t *testing.T) {
	f := loadFixtures(t)
	r := runCheck(t, f, Options{Role: "auto"}, f.libnrt, f.libnccom)
	if r.Exit != 0 {
		var b strings.Builder
		r.WriteText(&b)
		t.Fatalf("clean libnrt + libnccom: exit %d\n%s", r.Exit, b.String())
	}
	if r.Files[0].Role != specmatch.RoleLibnrt || r.Files[1].Role != specmatch.RoleLibnccom {
		t.Fatalf("roles %s, %s; want libnrt, libnccom from the SONAMEs", r.Files[0].Role, r.Files[1].Role)
	}
	for _, fr := range r.Files {
		if len(fr.Contract) < 4 {
			t.Fatalf("%s: only %d contract rules checked", fr.Path, len(fr.Contract))
		}
	}
}

func TestStructFaults(t *testing.T) {
	f := loadFixtures(t)
	const compat = "\tuint64_t compatibility_version; /* +48 HIGH */\n"
	cases := []struct {
		name, old, new string
		kind           string
		sev            Severity
		msg            string
	}{
		{"moved", "\tchar git_hash[16]; /* +32 HIGH */\n" + compat, compat + "\tchar git_hash[16];\n",
			KindOffset, Incompatible, "nec_version_info_t.compatibility_version: offset 32, spec 48 (field moved)"},
		{"resized", compat, "\tuint32_t compatibility_version;\n",
			KindFieldSize, Incompatible, "nec_version_info_t.compatibility_version: size 4 B, spec 8 B (field resized"},
		{"retyped", compat, "\tdouble compatibility_version;\n",
			KindType, Incompatible, "nec_version_info_t.compatibility_version: type double, spec u64 (field retyped)"},
		{"renamed", compat, "\tuint64_t compat_id;\n",
			KindRenamed, Compatible, "nec_version_info_t.compatibility_version: renamed to compat_id (same offset 48"},
		{"shrunk", "\tchar device_revision[8]; /* +24 HIGH */\n", "\tchar device_revision[4];\n",
			KindSize, Incompatible, "nrt_instance_info_t: size 28 B, spec 32 B (struct shrunk)"},
		{"embedded", "\tint refcnt; /* +28 HIGH */\n", "\tfloat refcnt;\n",
			// reported once, at the struct that defines the member (each fact once)
			KindType, Incompatible, "enc_nccl_comm_node.refcnt: type float, spec int (field retyped)"},
		{"opaque", "\tunsigned char nrtabi_opaque_16[1360]; /* +16..1376 opaque */\n", "\tint new_counter;\n\tunsigned char pad[1356];\n",
			KindAddedOpaque, Compatible, "nccl_comm_info_t.new_counter: new member inside the opaque range 16..1376"},
		{"bitfield", "\tuint32_t pod_sz; /* +40 HIGH */\n", "\tuint32_t pod_sz : 31;\n",
			KindBitfield, Incompatible, "enc_glb_comm.pod_sz: now a 31-bit bitfield at bit 320"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := f.faultObject(t, c.name, c.old, c.new)
			r := runCheck(t, f, Options{}, obj)
			expect(t, r, c.kind, c.sev, c.msg)
			if c.sev == Compatible && r.Exit != int(Compatible) {
				t.Fatalf("a compatible change alone must exit 4, got %d", r.Exit)
			}
		})
	}
}

func TestRequireMissingStruct(t *testing.T) {
	f := loadFixtures(t)
	// The stub libnccom's DWARF holds the structs its code uses, not enc_glb_comm.
	r := runCheck(t, f, Options{Role: specmatch.RoleNone}, f.libnccom)
	found := false
	for _, a := range r.Absent {
		found = found || a == "enc_glb_comm"
	}
	if !found || r.Exit != 0 {
		t.Fatalf("without --require an absent struct is listed, not an error: absent %v exit %d", r.Absent, r.Exit)
	}
	r = runCheck(t, f, Options{Role: specmatch.RoleNone, Require: []string{"enc_glb_comm"}}, f.libnccom)
	expect(t, r, KindMissingStruct, Incompatible, "enc_glb_comm: required struct not found in any input")
	if _, err := Check(context.Background(), []string{f.libnccom}, Options{Spec: f.sp, Structs: f.sp, Require: []string{"no_such_struct"}}); err == nil {
		t.Fatal("--require of a struct the spec lacks must be a usage error")
	} else if _, ok := err.(*UsageError); !ok {
		t.Fatalf("want *UsageError, got %T %v", err, err)
	}
}

// BenchmarkCheckAllStructs times a full struct check of the object holding
// every spec struct (scan, layouts, comparison); bench/layoutcheck compares
// the command with pahole on large inputs.
func BenchmarkCheckAllStructs(b *testing.B) {
	f := loadFixtures(b)
	for b.Loop() {
		if _, err := Check(context.Background(), []string{f.typesObj}, Options{Spec: f.sp, StructsSrc: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
}
