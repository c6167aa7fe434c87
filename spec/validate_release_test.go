package spec

import (
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
	if s.Release.RuntimeVersion != "" || s.Release.CollectivesVersion != "" {
		t.Errorf("2.32.0-synthetic inherited versions %q, %q from its parent", s.Release.RuntimeVersion, s.Release.CollectivesVersion)
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
