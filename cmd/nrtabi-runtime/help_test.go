package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// TestHelpEveryCommand iterates the registry: every command and group of
// nrtabi-runtime answers help with a synopsis, its flags and an example.
func TestHelpEveryCommand(t *testing.T) {
	app := newApp()
	for _, n := range app.Names() {
		for _, h := range []string{"-h", "--help"} {
			var out, errw bytes.Buffer
			if rc := run(append(strings.Fields(n), h), &out, &errw); rc != 0 || errw.Len() != 0 || !strings.Contains(out.String(), "usage: nrtabi-runtime "+n) {
				t.Errorf("%s %s: exit %d (help is stdout, exit 0):\n%s%s", n, h, rc, out.String(), errw.String())
			}
		}
		var out, errw bytes.Buffer
		rc := run(append([]string{"help"}, strings.Fields(n)...), &out, &errw)
		for _, w := range []string{"usage: nrtabi-runtime " + n, "example:\n  nrtabi-runtime " + n} {
			if rc != 0 || errw.Len() != 0 || !strings.Contains(out.String(), w) {
				t.Errorf("help %s: exit %d, lacks %q:\n%s%s", n, rc, w, out.String(), errw.String())
			}
		}
		if n != "version" && !strings.Contains(out.String(), "flags:\n  -") {
			t.Errorf("help %s lists no flags:\n%s", n, out.String())
		}
	}
	if g := app.Groups(); strings.Join(g, ",") != "build" {
		t.Errorf("groups %v", g)
	}
	var out, errw bytes.Buffer
	if rc := run([]string{"help", "build"}, &out, &errw); rc != 0 || !strings.Contains(out.String(), "build libnccom") || !strings.Contains(out.String(), "build nccom-stubs") {
		t.Errorf("help build: exit %d\n%s%s", rc, out.String(), errw.String())
	}
}

// TestVersionNamesRelease: version says which release the binary was
// built for (its -tags nrtabi_release_NAME).
func TestVersionNamesRelease(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out, errw bytes.Buffer
		if rc := run(args, &out, &errw); rc != 0 || !strings.Contains(out.String(), "built for release "+abi.Release+" (-tags "+abi.BuildTag+")\n") {
			t.Errorf("%v: exit %d\n%s%s", args, rc, out.String(), errw.String())
		}
	}
	for _, h := range []string{"-h", "--help", "help"} {
		var out, errw bytes.Buffer
		if rc := run([]string{h}, &out, &errw); rc != 0 || errw.Len() != 0 || !strings.Contains(out.String(), "usage: nrtabi-runtime COMMAND") {
			t.Errorf("%s: exit %d\n%s%s", h, rc, out.String(), errw.String())
		}
	}
}
