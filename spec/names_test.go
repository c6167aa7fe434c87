package spec

import (
	"regexp"
	"testing"
)

// TestIsIdent holds IsIdent to the C identifier grammar it replaces.
func TestIsIdent(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	for _, s := range []string{"", "a", "_", "_9", "9a", "nec_x1", "a-b", "a b", "é", "A_Z_0", "x\x00", "ok_", "0"} {
		if got, want := IsIdent(s), re.MatchString(s); got != want {
			t.Errorf("IsIdent(%q) = %v, want %v", s, got, want)
		}
	}
}
