package grade

import "testing"

// A partial row (spec partial = true) lists only the enumerators the
// documents name: the binary's others are not added, a partial new side
// removes nothing, and the listed values still count.
func TestEnumPartial(t *testing.T) {
	spec := &EnumSide{Name: "enc_model_state_t", Size: 4, Values: []EnumValue{{"ENC_MODEL_PARSE", 0}}, Partial: true}
	bin := &EnumSide{Name: "enc_model_state_t", Size: 4, Values: []EnumValue{{"ENC_MODEL_PARSE", 0}, {"ENC_MODEL_LOAD", 1}, {"ENC_MODEL_EXEC", 2}}}
	if cs := EnumGrade(spec, bin, true); len(cs) != 0 {
		t.Errorf("partial spec against a fuller binary: %+v, want no change", cs)
	}
	if cs := EnumGrade(bin, spec, true); len(cs) != 0 {
		t.Errorf("fuller old side against a partial new one: %+v, want no change", cs)
	}
	full := *spec
	full.Partial = false
	if cs := EnumGrade(&full, bin, true); len(cs) != 2 || cs[0].Kind != EnumKindValueAdded {
		t.Errorf("complete spec against a fuller binary: %+v, want 2 enumerator-added", cs)
	}
	shifted := &EnumSide{Name: "enc_model_state_t", Size: 4, Values: []EnumValue{{"ENC_MODEL_LOAD", 0}, {"ENC_MODEL_PARSE", 1}}}
	if cs := EnumGrade(spec, shifted, true); len(cs) != 1 || cs[0].Kind != EnumKindShifted || cs[0].Severity != EnumIncompatible {
		t.Errorf("partial spec, listed value shifted: %+v, want one incompatible enumerator-shifted", cs)
	}
	wide := *bin
	wide.Size = 8
	if cs := EnumGrade(spec, &wide, true); len(cs) != 1 || cs[0].Kind != EnumKindSize {
		t.Errorf("partial spec, size changed: %+v, want enum-size", cs)
	}
}
