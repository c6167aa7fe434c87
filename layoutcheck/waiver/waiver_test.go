package waiver

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const good = `# accepted findings
[[waiver]]
struct = "nec_comm_t"
field = "ring"
rule = "offset"
releases = "2.31.24..2.32.0"
why = "the vendor moved it; both sides rebuilt together"
who = "abi-team"
until = 2027-06-30

[[waiver]]
symbol = "nccl_foo"
rule = "export"
why = "dropped on purpose"
who = "ops"
until = 2026-01-01
`

func TestParseAndMatch(t *testing.T) {
	s, err := Parse("w.toml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Waivers) != 2 || s.Waivers[0].At.String() != "w.toml:2:1" || s.Waivers[1].At.Line != 11 {
		t.Fatalf("waivers %+v", s.Waivers)
	}
	for _, c := range []struct {
		sub  Subject
		want bool
	}{
		{Subject{Struct: "nec_comm_t", Fields: []string{"ring"}, Rules: []string{"offset", "moved"}, Release: "2.31.24"}, true},
		{Subject{Struct: "nec_comm_t", Fields: []string{"ring"}, Rules: []string{"moved"}, Release: "2.31.24"}, false},
		{Subject{Struct: "nec_comm_t", Fields: []string{"ring"}, Rules: []string{"offset"}, Release: "2.33.0"}, false},
		{Subject{Struct: "nec_comm_t", Fields: []string{"ring"}, Rules: []string{"offset"}, Release: "2.32.0-synthetic"}, true},
		{Subject{Struct: "nec_comm_t", Fields: []string{"ring"}, Rules: []string{"offset"}, Release: "/some/dir"}, false},
		{Subject{Struct: "nec_comm_t", Fields: []string{"other"}, Rules: []string{"offset"}, Release: "2.31.24"}, false},
	} {
		if got := s.Match(c.sub) != nil; got != c.want {
			t.Errorf("Match(%+v) = %v, want %v", c.sub, got, c.want)
		}
	}
	if u := s.Unused(); len(u) != 1 || u[0].Symbol != "nccl_foo" {
		t.Errorf("unused %v", u)
	}
	if s.Match(Subject{Symbol: "nccl_foo", Rules: []string{"export"}, Release: "x"}) == nil {
		t.Error("a waiver with no releases holds for any side")
	}
	if len(s.Unused()) != 0 {
		t.Error("matched waivers are used")
	}
}

// A planted expired waiver: 2026-01-01 holds through that day only.
func TestExpired(t *testing.T) {
	s, err := Parse("w.toml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if e := s.Expired(time.Date(2026, 1, 1, 23, 59, 0, 0, time.UTC)); len(e) != 0 {
		t.Errorf("expired on its last day: %v", e)
	}
	if e := s.Expired(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)); len(e) != 1 || e[0].Symbol != "nccl_foo" {
		t.Errorf("expired %v", e)
	}
}

func TestNowFromSourceDateEpoch(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1767312000") // 2026-01-02
	n, err := Now()
	if err != nil || n.Format(time.DateOnly) != "2026-01-02" {
		t.Fatalf("Now = %v, %v", n, err)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "soon")
	if _, err := Now(); err == nil || !strings.Contains(err.Error(), "SOURCE_DATE_EPOCH") {
		t.Fatalf("a bad SOURCE_DATE_EPOCH: %v", err)
	}
}

// Each planted fault is refused at its file:line:col.
func TestInvalid(t *testing.T) {
	entry := func(body string) string { return "# c\n[[waiver]]\n" + body }
	full := "why = \"w\"\nwho = \"me\"\nuntil = 2027-01-01\n"
	for _, c := range []struct{ name, in, want string }{
		{"syntax", "[[waiver]\n", "w.toml:2:9: expected end of table array name"},
		{"unknown key", entry("struct = \"a\"\nrule = \"size\"\nowner = \"x\"\n" + full), "w.toml:5:1: unknown key \"waiver.owner\""},
		{"unknown top", "colour = 1\n", "w.toml:1:1: unknown key \"colour\""},
		{"no subject", entry("rule = \"size\"\n" + full), "w.toml:2:1: waiver names no struct and no symbol"},
		{"both", entry("struct = \"a\"\nsymbol = \"b\"\nrule = \"size\"\n" + full), "w.toml:4:1: waiver names both"},
		{"field alone", entry("symbol = \"b\"\nfield = \"f\"\nrule = \"size\"\n" + full), "w.toml:4:1: field without struct"},
		{"no rule", entry("struct = \"a\"\n" + full), "w.toml:2:1: waiver has no rule"},
		{"bad rule", entry("struct = \"a\"\n  rule = \"Size!\"\n" + full), "w.toml:4:3: rule \"Size!\""},
		{"no why", entry("struct = \"a\"\nrule = \"size\"\nwho = \"me\"\nuntil = 2027-01-01\n"), "waiver has no why"},
		{"no until", entry("struct = \"a\"\nrule = \"size\"\nwhy = \"w\"\nwho = \"me\"\n"), "w.toml:2:1: waiver has no until"},
		{"string until", entry("struct = \"a\"\nrule = \"size\"\nwhy = \"w\"\nwho = \"me\"\nuntil = \"2027-01-01\"\n"), "w.toml:7:1: until is string"},
		{"time until", entry("struct = \"a\"\nrule = \"size\"\nwhy = \"w\"\nwho = \"me\"\nuntil = 2027-01-01T10:00:00\n"), "until has a time of day"},
		{"bad release", entry("struct = \"a\"\nrule = \"size\"\nreleases = \"two..2.31.24\"\n" + full), "w.toml:5:1: releases \"two..2.31.24\""},
		{"backwards", entry("struct = \"a\"\nrule = \"size\"\nreleases = \"2.32.0..2.31.24\"\n" + full), "runs backwards"},
		{"control", entry("struct = \"a\\u001b[2J\"\nrule = \"size\"\n" + full), "w.toml:3:1: struct holds a control character"},
		{"nested", "x = " + strings.Repeat("[", 20) + "\n", "w.toml:1:"},
	} {
		_, err := Parse("w.toml", []byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

func TestLoadRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, make([]byte, MaxFileSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{fifo: "not a regular file", dir: "not a regular file", big: "MaxFileSize",
		filepath.Join(dir, "none"): "no such file"} {
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%s) = %v, want %q", path, err, want)
		}
	}
}
