package main

import (
	"os/exec"
	"regexp"
	"testing"
)

// TestNoMethodCallsByName: once anything reachable in a binary can call a
// method by name through reflect (text/template does), the linker keeps every
// exported method of every type the binary links, and every command pays for
// the larger binary at start. nrtabi renders its C templates without that.
func TestNoMethodCallsByName(t *testing.T) {
	out, err := exec.Command("go", "tool", "nm", nrtabiBinary(t)).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool nm: %v\n%s", err, out)
	}
	re := regexp.MustCompile(`(?m) T (reflect\.(Value|\(\*rtype\))\.Method(ByName)?)$`)
	for _, m := range re.FindAllSubmatch(out, -1) {
		t.Errorf("nrtabi links %s: something reachable calls methods by name (see 'go build -ldflags=-dumpdep' for what reaches it)", m[1])
	}
}
