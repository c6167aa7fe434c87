package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestHelpEveryCommand iterates the registry: every command and group of
// nrtabi-runtime answers help with a synopsis, its flags and an example.
func TestHelpEveryCommand(t *testing.T) {
	app := newApp()
	for _, n := range app.Names() {
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
