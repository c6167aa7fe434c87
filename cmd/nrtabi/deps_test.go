package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoNetHTTP: nrtabi does not link net/http or crypto/tls. Their
// initialisation was the largest start-up cost of every command (4 MB of
// binary, 50 page faults and 0.7 ms of `nrtabi --help`) although only a
// debuginfod download uses them; the debuginfod client fetches http:// itself and https:// through
// curl (layoutcheck/elfread).
func TestNoNetHTTP(t *testing.T) {
	for _, tags := range []string{""} {
		cmd := exec.Command("go", "list", "-tags", tags, "-deps", "./cmd/nrtabi")
		cmd.Dir = "../.." // the module root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		pkgs := strings.Fields(string(out))
		if len(pkgs) < 50 || !strings.Contains("\n"+string(out), "\ngithub.com/nrtabi/nrtabi/layoutcheck/elfread\n") {
			t.Fatalf("go list -deps ./cmd/nrtabi listed %d packages without layoutcheck/elfread: not nrtabi's dependencies?\n%s", len(pkgs), out)
		}
		for _, p := range pkgs {
			for _, banned := range []string{"net/http", "crypto/tls"} {
				if p == banned || strings.HasPrefix(p, banned+"/") {
					t.Errorf("-tags %q: nrtabi links %s; find the importer with: go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./cmd/nrtabi | grep %s", tags, p, banned)
				}
			}
		}
	}
}
