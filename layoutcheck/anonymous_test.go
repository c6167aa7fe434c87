package layoutcheck

import (
	"context"
	"sort"
	"strings"
	"testing"
)

// TestAnonymousMembers: a spec field declared inside an anonymous union or
// struct (C11), as a generated header spells a renamed field both ways, is
// found there and checked; the anonymous member is then no new member.
// Before the members of anonymous ones were read, the first tree reported
// rt_minor and rt_patch missing (incompatible) and two <anonymous@N>
// members added.
func TestAnonymousMembers(t *testing.T) {
	sp := defaultSpec(t)
	const head = "#include <stdint.h>\ntypedef struct nrt_version { uint64_t rt_major;\n"
	const tailDecl = "\tuint64_t rt_maintenance; char rt_detail[128]; char git_hash[64]; } nrt_version_t;\n"
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"both spellings", "\tunion { uint64_t rt_minor; uint64_t minor_was; };\n\tstruct { union { uint64_t rt_patch; uint64_t patch_was; }; };\n", nil},
		// planted: the field inside the union has the wrong type.
		{"retyped inside", "\tunion { uint32_t rt_minor; uint64_t minor_was; };\n\tuint64_t rt_patch;\n", []string{"incompatible field-size nrt_version_t.rt_minor"}},
		// planted: the union holds neither the spec's name nor a match;
		// what lies over rt_minor's bytes is no addition in padding but a
		// member laid over a spec field (once compatible here,
		// incompatible in diff; package grade grades it incompatible).
		{"missing inside", "\tunion { uint32_t other; uint32_t other2; };\n\tuint32_t pad;\n\tuint64_t rt_patch;\n", []string{"incompatible laid-over nrt_version_t.<anonymous@8>", "incompatible laid-over nrt_version_t.pad", "incompatible missing-field nrt_version_t.rt_minor"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := writeTree(t, map[string]string{"v.h": head + c.body + tailDecl})
			h := compileHeaders(t, dir)
			r, err := Check(context.Background(), []string{h.Object}, Options{Spec: sp, StructsSrc: "spec", DebugDirs: []string{t.TempDir()}, Require: []string{"nrt_version_t"}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range r.Findings {
				got = append(got, f.Severity.String()+" "+f.Kind+" "+f.Struct+"."+f.Field)
			}
			sort.Strings(got)
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("findings:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
		})
	}
}
