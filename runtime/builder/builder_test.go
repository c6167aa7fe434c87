package builder

import (
	"errors"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/gen"
)

func open(t *testing.T) *Tree {
	t.Helper()
	tr, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestLibnrtScripts(t *testing.T) {
	tr := open(t)
	node := tr.Spec.Reverse[0].Version
	for _, v := range LinkVariants {
		s, err := tr.LibnrtScript(v)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		text := string(s)
		if v == Unversioned {
			if s != nil {
				t.Errorf("the unversioned variant has a script:\n%s", text)
			}
			continue
		}
		for _, e := range LibnrtExports {
			if !strings.Contains(text, "    "+e+";") {
				t.Errorf("%s: %s is not exported", v, e)
			}
		}
		callbacks := 0
		for _, r := range tr.Spec.Reverse {
			if strings.Contains(text, "    "+r.Name+";") {
				callbacks++
			}
		}
		local := strings.Contains(text, "local:\n    *;")
		switch v {
		case Versioned:
			if callbacks != len(tr.Spec.Reverse) || !local || !strings.Contains(text, node+" {") {
				t.Errorf("versioned: %d callbacks, local %v:\n%s", callbacks, local, text)
			}
		case BaseFallback:
			if callbacks != 0 || local || !strings.Contains(text, node+" {") {
				t.Errorf("base-fallback: the node must exist, list no callback and hide nothing:\n%s", text)
			}
		case NoNode:
			if callbacks != len(tr.Spec.Reverse) || strings.Contains(text, node) || !strings.Contains(text, OtherNode+" {") {
				t.Errorf("no-node: every callback under %s and no %s:\n%s", OtherNode, node, text)
			}
		case NotExported:
			if callbacks != len(tr.Spec.Reverse)-1 || strings.Contains(text, "    "+tr.HiddenCallback()+";") || !local {
				t.Errorf("not-exported: %s must be left out:\n%s", tr.HiddenCallback(), text)
			}
		}
	}
	if _, err := tr.LibnrtScript("sideways"); err == nil {
		t.Error("an unknown variant: no error")
	}
}

func TestStubList(t *testing.T) {
	tr := open(t)
	seen := map[string]bool{}
	for _, s := range tr.Stubs() {
		if seen[s.Name] {
			t.Errorf("two doubles named %s", s.Name)
		}
		seen[s.Name] = true
	}
	n := len(tr.Spec.Forward)
	for _, want := range []string{StubGood, tr.StubIncompatible(), StubNoProbe, StubMissing(1), StubMissing(n / 2), StubMissing(n - 1), StubFailRC, StubForwardVersioned, StubForwardOnly} {
		if !seen[want] {
			t.Errorf("no double %s", want)
		}
	}
	c, _ := tr.Spec.ConstantByName("NCCOM_COMPAT_ID").Int()
	if tr.WrongCompat() != uint64(c)-1 {
		t.Errorf("WrongCompat = %d", tr.WrongCompat())
	}
	if _, err := tr.StubByName("nonesuch"); err == nil {
		t.Error("StubByName of an unknown double: no error")
	}
}

func TestFindRoot(t *testing.T) {
	var nc *gen.NotCheckoutError
	if _, err := FindRoot(t.TempDir()); !errors.As(err, &nc) {
		t.Errorf("FindRoot outside the tree: %v, want a gen.NotCheckoutError", err)
	}
}
