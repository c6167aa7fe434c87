package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/internal/hostile"
)

// TestHeadersHostileCLI runs the built binary, with a 2 GiB address space,
// on every crafted header tree: check --headers (and release new --headers
// on the trees refused before compiling) ends within hangLimit with exit 1
// and one escaped line naming the limit it hit, and prints nothing on
// stdout. The compiler's own limits are the defaults (10 s, 1 GiB).
func TestHeadersHostileCLI(t *testing.T) {
	needCC(t)
	bin := nrtabiBinary(t)
	for _, c := range hostile.HeaderCases() {
		t.Run(c.Name, func(t *testing.T) {
			dir, err := c.Build(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			runs := [][]string{{"check", "--headers", dir}}
			switch c.Want {
			case hostile.WantName, hostile.WantNotRegular, hostile.WantOutside:
				runs = append(runs, []string{"release", "new", "--name", "x", "--out", filepath.Join(t.TempDir(), "x"), "--headers", dir})
			}
			for _, args := range runs {
				code, stdout, stderr, took := runLimited(t, bin, args)
				want, alt := c.Want, c.Alt
				if want == "" { // compiles: none of the spec's structs in it
					want = "declares none of the"
				}
				if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 ||
					!(strings.Contains(stderr, want) || alt != "" && strings.Contains(stderr, alt)) || strings.ContainsAny(stderr, "\x1b\x07\r") {
					t.Errorf("nrtabi %s: exit %d after %v, stdout %.200q, stderr %.600q; want exit 1 and one line with %q",
						args[0], code, took.Round(time.Millisecond), stdout, stderr, want)
				}
			}
		})
	}
}
