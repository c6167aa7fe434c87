package spec

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestVersionProblem holds the version grammar to each bound: a planted
// fault in any branch (parts, digits, leading zero, size) lets a bad version
// through and fails here.
func TestVersionProblem(t *testing.T) {
	good := []string{"2.31.24", "2.31.24.0", "0.0.0", "2.32.31", "999999999.0.0.999999999"}
	for _, v := range good {
		if p := VersionProblem(v); p != "" {
			t.Errorf("%q: %s", v, p)
		}
	}
	bad := map[string]string{
		"":                      "1 dotted parts",
		"2.31":                  "2 dotted parts",
		"2.31.24.0.1":           "5 dotted parts",
		"sdk2.28.0":             "not a decimal number",
		"2.31.24-1":             "not a decimal number",
		"2.+31.24":              "not a decimal number",
		"2.31..0":               "part 3 is empty",
		"2.31.024":              "leading zero",
		"1000000000.0.0":        "above 999999999",
		"2.31.24\n":             "not a decimal number",
		"２.31.24":               "not a decimal number",
		strings.Repeat("1", 60): "bytes long",
	}
	for v, want := range bad {
		if p := VersionProblem(v); !strings.Contains(p, want) {
			t.Errorf("%q: got %q, want it to say %q", v, p, want)
		}
		if _, err := ParseVersion(v); err == nil {
			t.Errorf("ParseVersion(%q) accepted it", v)
		}
	}
	got, err := ParseVersion("2.32.31")
	if err != nil || got != [4]uint64{2, 32, 31, 0} {
		t.Errorf("ParseVersion(2.32.31) = %v, %v", got, err)
	}
}

// TestReleaseVersionsNotInherited: a derived release that does not state its
// versions has none; the parent's are not its own (docs/spec-format.md#release-identity).
func TestReleaseVersionsNotInherited(t *testing.T) {
	s, err := Load("2.32.0-synthetic")
	if err != nil {
		t.Fatal(err)
	}
	// The synthetic release states its own, unlike its name.
	if s.Release.RuntimeVersion != "2.32.5.0" || s.Release.CollectivesVersion != "2.31.30.0" {
		t.Errorf("2.32.0-synthetic versions %q, %q", s.Release.RuntimeVersion, s.Release.CollectivesVersion)
	}
	// Without them, it has none: not its parent's, not its name's.
	dir := filepath.Join(t.TempDir(), "2.32.0-synthetic")
	if err := os.Rename(copyRelease(t, "2.32.0-synthetic"), dir); err != nil {
		t.Fatal(err)
	}
	edit(t, dir, "release.toml", "[release]", "runtime_version = \"2.32.5.0\"\ncollectives_version = \"2.31.30.0\"\n", "")
	if s, err = LoadDir(dir); err != nil {
		t.Fatal(err)
	}
	if s.Release.RuntimeVersion != "" || s.Release.CollectivesVersion != "" {
		t.Errorf("a derived release without versions inherited %q, %q from its parent", s.Release.RuntimeVersion, s.Release.CollectivesVersion)
	}
	p, err := Load(Default)
	if err != nil {
		t.Fatal(err)
	}
	if p.Release.RuntimeVersion != "2.31.24.0" || p.Release.CollectivesVersion != "2.31.24.0" {
		t.Errorf("2.31.24: versions %q, %q", p.Release.RuntimeVersion, p.Release.CollectivesVersion)
	}
}

func FuzzVersion(f *testing.F) {
	for _, s := range []string{"2.31.24.0", "2.32.31", "0.0.0", "01.2.3", "1..2", "sdk2.28.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		parts, err := ParseVersion(v)
		if (err == nil) != (VersionProblem(v) == "") {
			t.Fatalf("%q: ParseVersion and VersionProblem disagree", v)
		}
		if err != nil {
			return
		}
		// An accepted version round-trips through its parts.
		n := strings.Count(v, ".") + 1
		var b strings.Builder
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(strconv.FormatUint(parts[i], 10))
		}
		if b.String() != v {
			t.Fatalf("%q -> %v -> %q", v, parts, b.String())
		}
	})
}

// TestCarriedFrom plants each fault of rule carried in a derived release:
// carried_from naming a release outside the chain, and a carried key list
// that does not say where from; a carried_from naming the parent loads, and
// a library table the child leaves out is marked as its parent's.
func TestCarriedFrom(t *testing.T) {
	const name = "2.32.0-synthetic"
	for _, c := range []struct{ old, repl, want string }{
		{`source = "synthetic: one forward symbol added"`, "source = \"x\"\ncarried_from = \"2.31.24\"", ""},
		{`source = "synthetic: one forward symbol added"`, "source = \"x\"\ncarried = [\"reverse_nec\"]\ncarried_from = \"2.31.24\"", ""},
		{`source = "synthetic: one forward symbol added"`, "source = \"x\"\ncarried_from = \"2.30.0\"", `[counts]: carried_from = "2.30.0" names no release this one derives from (2.31.24)`},
		{`source = "synthetic: one forward symbol added"`, "source = \"x\"\ncarried = [\"reverse_nec\"]", `[counts]: carried = ["reverse_nec"] without carried_from`},
		{`source = "synthetic: one forward symbol added"`, "source = \"x\"\ncarried = [\"revrse_nec\"]\ncarried_from = \"2.31.24\"", `[counts]: carried lists "revrse_nec", which is no key of the row`},
	} {
		dir := filepath.Join(t.TempDir(), name)
		if err := os.Rename(copyRelease(t, name), dir); err != nil {
			t.Fatal(err)
		}
		edit(t, dir, "release.toml", "[counts]", c.old, c.repl)
		s, err := LoadDir(dir)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.repl, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "release.toml:")):
			t.Errorf("%q: %v, want %q at release.toml", c.repl, err, c.want)
		case c.want == "" && (!s.Counts.IsCarried("reverse_nec") || s.Counts.IsCarried("forward") != !strings.Contains(c.repl, "carried =")):
			t.Errorf("%q: IsCarried wrong: %+v", c.repl, s.Counts.Fact)
		}
	}
	s, err := Load(name)
	if err != nil {
		t.Fatal(err)
	}
	// libnccom_net is left out by the child: the parent's, marked; libnrt is
	// the child's own and knows no git.
	if net := s.Release.LibNCCOMNet; net.CarriedFrom != Default || net.OwnGit() != "" && net.Git != "" {
		t.Errorf("inherited libnccom_net: carried_from %q", net.CarriedFrom)
	}
	if l := s.Release.LibNRT; l.CarriedFrom != "" || l.OwnGit() != "" {
		t.Errorf("2.32.0-synthetic libnrt: carried_from %q, git %q", l.CarriedFrom, l.OwnGit())
	}
	p, _ := Load(Default)
	if p.Release.LibNRT.OwnGit() != "0b044f4ce917b633a70eb3d0bc460f34ac3da620" {
		t.Errorf("2.31.24 libnrt OwnGit = %q", p.Release.LibNRT.OwnGit())
	}
	var l Library
	l.Git, l.CarriedFrom, l.Carried = "abc", Default, []string{"git"}
	if l.OwnGit() != "" {
		t.Error("a carried git is reported as the release's own")
	}
	l.BuildID = "ab"
	if l.OwnBuildID() != "ab" {
		t.Error("a build-id not in carried is not the release's own")
	}
	l.Carried = nil // the whole row
	if l.OwnBuildID() != "" || l.OwnGit() != "" {
		t.Error("a wholly carried library's build-id or git is reported as the release's own")
	}
}
