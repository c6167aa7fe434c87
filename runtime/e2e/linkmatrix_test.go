package e2e

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/runtime/builder"
	"github.com/nrtabi/nrtabi/spec"
)

// TestLinkMatrix loads the good double after each libnrt variant, in a
// child process, and holds the dynamic linker's outcome to the spec's
// [[link_behaviour]] row of that variant (outcome, message, glibc).
func TestLinkMatrix(t *testing.T) {
	requireBuild(t)
	glibc := glibcVersion(t)
	cases := []struct {
		row, libnrt, stub string
	}{
		{"versioned", variantLib(builder.Versioned), builder.StubGood},
		{"base-fallback", variantLib(builder.BaseFallback), builder.StubGood},
		{"no-node", variantLib(builder.NoNode), builder.StubGood},
		{"not-exported", variantLib(builder.NotExported), builder.StubGood},
		{"unversioned-go-library", variantLib(builder.Unversioned), builder.StubGood},
		{"unversioned-library", minimalDir() + "/" + builder.LibnrtFile, builder.StubGood},
		{"forward-versioned", variantLib(builder.Versioned), builder.StubForwardVersioned},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.row] = true
		t.Run(c.row, func(t *testing.T) {
			row := linkRow(t, c.row)
			if row.Glibc != glibc {
				t.Logf("the spec row was measured on glibc %s, this machine has %s", row.Glibc, glibc)
			}
			text, code := linkhost(t, c.libnrt, c.stub)
			if p := checkLink(row, text, code); p != "" {
				t.Error(p)
			}
		})
	}
	for _, l := range tree.Spec.LinkBehaviours {
		if !seen[l.Variant] {
			t.Errorf("spec [[link_behaviour]] %q (%s) is not measured by this test", l.Variant, l.Pos)
		}
	}
}

// The checker must see an outcome that is not the row's.
func TestLinkCheckerCatches(t *testing.T) {
	requireBuild(t)
	text, code := linkhost(t, variantLib(builder.NoNode), builder.StubGood)
	if checkLink(linkRow(t, "versioned"), text, code) == "" {
		t.Error("a failed load passed as the versioned row")
	}
	text, code = linkhost(t, variantLib(builder.Versioned), builder.StubGood)
	for _, row := range []string{"no-node", "not-exported", "unversioned-library"} {
		if checkLink(linkRow(t, row), text, code) == "" {
			t.Errorf("a good load passed as row %s", row)
		}
	}
}

// linkhost loads libnrt, then the double, in a child process.
func linkhost(t *testing.T, libnrt, stub string) (string, int) {
	t.Helper()
	return runLinkhost(t, libnrt, stubPath(stub))
}

func checkLink(row spec.LinkBehaviour, text string, code int) string {
	switch row.Outcome {
	case "loads":
		if code != 0 || !strings.Contains(text, "nrtabi_init: status 0, "+strconv.Itoa(len(tree.Spec.Forward))+" slots valid") ||
			!strings.Contains(text, "round trip: neuronGetPeerDeviceId: ok") {
			return fmt.Sprintf("spec row %q (glibc %s) loads; exit %d:\n%s", row.Variant, row.Glibc, code, text)
		}
	case "error":
		if code != 1 || !strings.Contains(text, row.Message) || !strings.Contains(text, " 0 slots valid") {
			return fmt.Sprintf("spec row %q (glibc %s) fails the load with %q; exit %d:\n%s", row.Variant, row.Glibc, row.Message, code, text)
		}
	case "abort":
		if code != 127 || !strings.Contains(text, row.Message) {
			return fmt.Sprintf("spec row %q (glibc %s) aborts with %q; exit %d:\n%s", row.Variant, row.Glibc, row.Message, code, text)
		}
	default:
		return fmt.Sprintf("spec row %q has outcome %q", row.Variant, row.Outcome)
	}
	return ""
}

func linkRow(t *testing.T, variant string) spec.LinkBehaviour {
	t.Helper()
	for _, l := range tree.Spec.LinkBehaviours {
		if l.Variant == variant {
			return l
		}
	}
	t.Fatalf("the spec has no [[link_behaviour]] row %q", variant)
	return spec.LinkBehaviour{}
}

func glibcVersion(t *testing.T) string {
	out, err := exec.Command("getconf", "GNU_LIBC_VERSION").Output()
	if err != nil {
		t.Logf("getconf GNU_LIBC_VERSION: %v", err)
		return "unknown"
	}
	return strings.TrimPrefix(strings.TrimSpace(string(out)), "glibc ")
}
