package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestReportOnePlace: whatever a command returns, App.report prints it one
// way and maps it to the status: a usage error is its line and the
// synopsis (2), an error one escaped line (1), lines as they are, a status
// alone nothing, -h's stop 0.
func TestReportOnePlace(t *testing.T) {
	cause := errors.New("inner")
	for _, c := range []struct {
		name string
		err  error
		rc   int
		want string
	}{
		{"nil", nil, 0, ""},
		{"stopped", Stopped, 0, ""},
		{"usage", nil, 2, "t cmd: want FILE\nusage: t cmd [flags] (run 't help cmd')\n"},
		{"plain", errors.New("a.so: bad\x1b[31m\nline"), 1, "t cmd: a.so: bad\\x1b[31m\\nline\n"},
		{"errorf", nil, 1, "t cmd: reading x: inner\n"},
		{"lines", Lines(ExitError, cause, "spec/a.toml:1:2: bad", "spec/a: 1 error(s)"), 1, "spec/a.toml:1:2: bad\nspec/a: 1 error(s)\n"},
		{"exit bits", Exit(12), 12, ""},
		{"wrap", Wrap(ExitUsage, cause), 2, "t cmd: inner\n"},
	} {
		var ran *Command
		a := NewApp("t", "a test app", &Command{Name: "cmd", Summary: "s", Example: "cmd", Run: func(_ context.Context, cmd *Command, _ []string, _, _ io.Writer) error {
			ran = cmd
			switch c.name {
			case "usage":
				return cmd.Usagef("want FILE")
			case "errorf":
				return cmd.Errorf("reading x: %w", cause)
			}
			return c.err
		}})
		var out, errw bytes.Buffer
		rc := a.Run(context.Background(), []string{"cmd"}, &out, &errw)
		if rc != c.rc || errw.String() != c.want || out.Len() != 0 {
			t.Errorf("%s: exit %d, stderr %q; want exit %d, %q", c.name, rc, errw.String(), c.rc, c.want)
		}
		if c.name == "errorf" || c.name == "lines" || c.name == "wrap" {
			err := c.err
			if err == nil {
				err = ran.Errorf("reading x: %w", cause)
			}
			if !errors.Is(err, cause) {
				t.Errorf("%s: the cause is lost: %v", c.name, err)
			}
		}
	}
	if Exit(0) != nil || StatusOf(nil) != 0 || StatusOf(errors.New("x")) != 1 || StatusOf(Exit(4)) != 4 {
		t.Error("Exit and StatusOf")
	}
}

// TestMessageIsWhatIsPrinted: an error document says what stderr says,
// escaped the same, without the command's name and the usage reminder.
func TestMessageIsWhatIsPrinted(t *testing.T) {
	a := NewApp("t", "a test app", &Command{Name: "cmd", Summary: "s", Example: "cmd"})
	c := a.commands["cmd"]
	for _, x := range []struct {
		err  error
		want string
	}{
		{c.Usagef("bad %s", "x\ny"), `bad x\ny`},
		{errors.New("a\x1bb"), `a\x1bb`},
		{Lines(2, nil, "t cmd: unknown flag \"--x\""), `unknown flag "--x"`},
	} {
		if got := c.Message(x.err); got != x.want {
			t.Errorf("Message(%v) = %q, want %q", x.err, got, x.want)
		}
	}
}

// TestReaderLinksNoNetwork: the reader stays pure; the commands join it to
// debuginfod here (Debuginfod), so neither net/http nor the client is
// among elfread's dependencies.
func TestReaderLinksNoNetwork(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/nrtabi/nrtabi/readers/elfread").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps gave %d packages: the check would pass on nothing", len(deps))
	}
	for _, d := range deps {
		if d == "net" || d == "net/http" || strings.HasSuffix(d, "/internal/debuginfod") {
			t.Errorf("readers/elfread depends on %s", d)
		}
	}
}
