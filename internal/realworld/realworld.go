// Package realworld is where the opt-in wide test runs find the real
// artefacts they read: the machine's debug files (docs/layoutcheck.md#real-artefacts-wide).
package realworld

import (
	"os"
	"strings"
	"testing"
)

// Roots skips t unless NRTABI_REALWORLD is set (the runs are not part of
// make test), else returns the directories to read: /usr/lib/debug, then
// those NRTABI_REALWORLD_DIRS lists (colon-separated: extracted -dbg
// packages); NRTABI_REALWORLD_ONLY leaves /usr/lib/debug out (a rerun of
// the DIRS alone).
func Roots(t testing.TB) []string {
	t.Helper()
	if os.Getenv("NRTABI_REALWORLD") == "" {
		t.Skip("skipping: the wide real-artefact run is opt-in (NRTABI_REALWORLD=1)")
	}
	roots := []string{"/usr/lib/debug"}
	if extra := os.Getenv("NRTABI_REALWORLD_DIRS"); extra != "" {
		roots = append(roots, strings.Split(extra, ":")...)
	}
	if os.Getenv("NRTABI_REALWORLD_ONLY") != "" {
		roots = roots[1:]
	}
	return roots
}
