package cfmt

import "testing"

// The formats the runtime boundary renders from the spec's messages.
func TestSprintfBoundaryMessages(t *testing.T) {
	for _, c := range []struct {
		format string
		args   []any
		want   string
	}{
		{"Compatibility id: %lu, expected: 89", []any{uint64(88)}, "Compatibility id: 88, expected: 89"},
		{"Failed to find core %u", []any{uint32(7)}, "Failed to find core 7"},
		{"cannot find symbol \"%s\" in NCCL. Reason: %s", []any{"neuronX", "gone"}, "cannot find symbol \"neuronX\" in NCCL. Reason: gone"},
		{"NCCL init error: %s", []any{"x"}, "NCCL init error: x"},
		{"failed %s request to NCCL", []any{"neuronGetUniqueId"}, "failed neuronGetUniqueId request to NCCL"},
		{"Error opening libnccom.so, cannot use collective operations! ... %s", []any{""}, "Error opening libnccom.so, cannot use collective operations! ... "},
	} {
		if got := Sprintf(c.format, c.args...); got != c.want {
			t.Errorf("Sprintf(%q) = %q, want %q", c.format, got, c.want)
		}
	}
}
