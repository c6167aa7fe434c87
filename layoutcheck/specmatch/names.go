package specmatch

import "github.com/nrtabi/nrtabi/spec"

// StructNames are the names a spec struct may carry in DWARF, most specific
// first: its spec name, its tag, its typedefs, and TAG_t.
func StructNames(st *spec.Struct) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range append(append([]string{st.Name, st.CTag()}, st.Typedefs()...), st.CTag()+"_t") {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
