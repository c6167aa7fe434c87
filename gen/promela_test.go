package gen

import (
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/spectest"
	"github.com/nrtabi/nrtabi/spec"
)

func TestGenerateRefusesBadRows(t *testing.T) {
	for _, c := range []struct{ old, repl, want string }{
		{`value = "(r - 1) >> 1"`, `value = "(r - 1) >> x"`, `unexpected "x"`},
		{`value = "(r - 1) >> 1"`, `value = "(r - 1 >> 1"`, "missing )"},
		{`value = "(r - 1) >> 1"`, `value = "r; system()"`, "unexpected character"},
		{`value = "(r - 1) >> 1"`, `value = "` + strings.Repeat("(", 40) + "r" + strings.Repeat(")", 40) + `"`, "deeper than"},
	} {
		dir := spectest.CopyRelease(t, spec.Embedded, spec.Default)
		spectest.Replace(t, dir, "constants.toml", c.old, c.repl)
		s, err := spec.LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		_, err = PromelaHeader(s)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "ENC_SIG_TREE_PARENT") {
			t.Errorf("%s: got %v, want an error naming the row and %q", c.repl, err, c.want)
		}
	}
}

func FuzzParseExpr(f *testing.F) {
	for _, s := range []string{"2*r + 1", "(r - 1) >> 1", "n <= mask", "r & ~mask", "(r - i - 1 + n) % n", "-r", "((", "1 << 99"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := parseExpr(src, "r", "n", "mask", "step", "i")
		if err != nil {
			return
		}
		_ = e.promela()
		_, _ = e.Eval(map[string]int64{"r": 3, "n": 8, "mask": 4, "step": 1, "i": 2})
	})
}
