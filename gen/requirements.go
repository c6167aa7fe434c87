package gen

import (
	"fmt"
	"strings"

	"github.com/nrtabi/nrtabi/spec"
)

// requirements lists the spec facts the templates are written against. A
// valid spec may still lack them (a struct-only fragment, say); the
// generator then names everything missing at once instead of emitting C that
// does not compile.
func requirements(s *spec.Spec) error {
	var missing []string
	st := s.EnumByName("NRT_STATUS")
	if st == nil {
		missing = append(missing, "[[enum]] NRT_STATUS")
	} else {
		have := map[string]bool{}
		for _, v := range st.Values {
			have[v.Name] = true
		}
		for _, v := range []string{"NRT_SUCCESS", "NRT_FAILURE"} {
			if !have[v] {
				missing = append(missing, "NRT_STATUS value "+v)
			}
		}
	}
	for _, id := range []string{"nccl_init_error", "nccl_request_failed"} {
		if s.MessageByID(id) == nil {
			missing = append(missing, "[[message]] "+id)
		}
	}
	for _, name := range []string{"NCCOM_VERSION_STRING", "NCCOM_COMPAT_ID", "VERSION_INFO_GIT_HASH_AFTER", "VERSION_INFO_COMPAT_AFTER"} {
		if s.ConstantByName(name) == nil {
			missing = append(missing, "[[constant]] "+name)
		}
	}
	for _, f := range s.Forward {
		if f.Guard == spec.Probe && (len(f.Params) != 2 || f.Params[0].T.Kind != spec.KindPointer) {
			missing = append(missing, fmt.Sprintf("the probe %s taking (struct *out, size n), not (%s)", f.Name, cParams(f.Params)))
		}
	}
	for _, f := range s.Forward {
		want, ok := stubParams()[f.Name]
		if !ok {
			continue
		}
		var have []string
		for _, p := range f.Params {
			have = append(have, p.Name)
		}
		if strings.Join(have, ",") != strings.Join(want, ",") {
			missing = append(missing, fmt.Sprintf("%s with the parameters (%s) the libnccom double's body uses, not (%s)", f.Name, strings.Join(want, ", "), strings.Join(have, ", ")))
			continue
		}
		for _, p := range f.Params {
			fields, ok := stubOutFields()[f.Name]
			if !ok || p.Name != "out" || p.T == nil || p.T.Kind != spec.KindPointer || p.T.Elem.Kind != spec.KindStruct {
				continue
			}
			st := p.T.Elem.Struct
			for _, fd := range fields {
				if !hasField(st, fd) {
					missing = append(missing, fmt.Sprintf("%s.%s, which the libnccom double's %s writes", st.Name, fd, f.Name))
				}
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the spec lacks what the generated code needs: %s", strings.Join(missing, "; "))
	}
	return nil
}

// hasField: the double names a member by its stable name, which the header
// declares in every release (docs/generator.md#stable-fields).
func hasField(st *spec.Struct, name string) bool {
	for _, f := range st.Fields {
		if f.Name == name || f.StableName() == name {
			return true
		}
	}
	return false
}
