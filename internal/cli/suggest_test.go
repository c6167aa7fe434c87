package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzUnknownWords: whatever word follows the binary's name or a command,
// an unknown one is answered with exactly one escaped line and exit 2,
// never a panic or the usage dump.
func FuzzUnknownWords(f *testing.F) {
	for _, s := range []string{"chekc", "--formt", "-V", "spec", "\x1b[31mred", "a\nb", strings.Repeat("x", 300), "\xff\xfe", "--", "-"} {
		f.Add(s, "--x")
	}
	a := NewApp("t", "a test app", &Command{Name: "check", Summary: "s", Example: "check", Run: func(_ context.Context, c *Command, args []string, out, errw io.Writer) error {
		fs := c.Flags(out, errw)
		fs.String("format", "text", "f")
		return c.Parse(fs, args)
	}})
	f.Fuzz(func(t *testing.T, word, flagWord string) {
		if len(word) > 1<<12 || len(flagWord) > 1<<12 {
			return
		}
		cases := [][]string{{word}}
		if len(flagWord) > 1 && flagWord[0] == '-' && flagWord != "--" {
			cases = append(cases, []string{"check", flagWord}) // a positional is Usagef's two lines
		}
		for _, args := range cases {
			var out, errw bytes.Buffer
			rc := a.Run(context.Background(), args, &out, &errw)
			if rc != ExitUsage {
				continue
			}
			msg := errw.String()
			if strings.Count(msg, "\n") != 1 || !strings.HasSuffix(msg, "\n") {
				if strings.HasPrefix(msg, "t: a test app") || strings.HasPrefix(msg, "usage:") {
					continue // the command list for no command at all
				}
				t.Fatalf("%q: not one line: %q", args, msg)
			}
			if !utf8.ValidString(msg) || strings.ContainsAny(strings.TrimSuffix(msg, "\n"), "\x1b\r\n") {
				t.Fatalf("%q: unescaped bytes: %q", args, msg)
			}
		}
	})
}

func TestSuggestBounds(t *testing.T) {
	if got := Suggest("chekc", []string{"check", "diff"}); got != "check" {
		t.Errorf("chekc: %q", got)
	}
	if osaDistance("ab", "ba") != 1 || osaDistance("", "abc") != 3 || osaDistance("kitten", "sitting") != 3 {
		t.Error("osaDistance")
	}
}
