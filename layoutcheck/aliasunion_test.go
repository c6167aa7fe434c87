package layoutcheck

import (
	"strings"
	"testing"
)

// TestAliasUnion (C): a field the generated header declares under its
// release's name and its stable one (an anonymous union of one type,
// docs/generator.md#stable-fields) checks clean against the spec that names
// either. Any anonymous union's members are members of the struct (C11), so
// a wrap that keeps the spec's member is clean whatever else it overlays (the
// anonymous-union false positive of other tools), while one whose
// member of the spec's name has another type is caught.
func TestAliasUnion(t *testing.T) {
	plain := `#include <stdint.h>
struct glb { uint32_t a; uint32_t b; uint64_t pod_id; uint32_t c; };
struct glb g;
`
	frag := fragmentOf(t, compileTypes(t, plain), "glb")
	for _, tc := range []struct {
		name, member string
		clean        bool
	}{
		{"alias union", "union { uint64_t pod_id; uint64_t reservation_id; };", true},
		{"alias union, stable name first", "union { uint64_t reservation_id; uint64_t pod_id; };", true},
		{"wrap keeping the member", "union { uint64_t pod_id; double reservation_id; };", true},
		{"wrap re-typing the member", "union { double pod_id; uint64_t reservation_id; };", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(plain, "uint64_t pod_id;", tc.member, 1)
			r := gradingCheck(t, frag, compileTypes(t, src))
			if tc.clean && (r.Exit != 0 || len(r.Findings) != 0) {
				t.Fatalf("exit %d, findings %+v", r.Exit, r.Findings)
			}
			if !tc.clean && r.Exit == 0 {
				t.Fatalf("a union re-typing the spec member checks clean: %+v", r.Findings)
			}
		})
	}
}
