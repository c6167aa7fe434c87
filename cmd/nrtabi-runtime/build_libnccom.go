package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/runtime/builder"
	"github.com/nrtabi/nrtabi/spec"
)

// `make libnccom`: the reference libnccom (runtime/libnccom).
func init() {
	app.Register(&cli.Command{Name: "build libnccom", Summary: "build the reference libnccom.so.2 (hand-written C over the generated header) against a built libnrt.so.1", Synopsis: "[--spec NAME] [--libnrt DIR] [--out DIR] [--git-hash H] [--sanitize]", Example: "build libnccom --libnrt build --out build", Run: buildLibnccom})
}

func buildLibnccom(c *cli.Command, args []string, out, errw io.Writer) int {
	fs := c.Flags(errw)
	libnrt := fs.String("libnrt", "build", "directory holding the libnrt.so.1 it links against")
	dir := fs.String("out", "build", "directory to write libnccom.so.2 (and the libnccom.so link) to")
	var sf cli.SpecFlag
	sf.Register(fs, "spec", spec.Default, "the release to build (an embedded one: the generated tree holds only those)")
	gitHash := fs.String("git-hash", "", "git hash the library reports instead of the release's (a skewed build)")
	sanitize := fs.Bool("sanitize", false, "build with AddressSanitizer and UBSan (preload libasan to load it)")
	if rc := c.Parse(fs, args, errw); rc >= 0 {
		return rc
	}
	release, rc := embeddedRelease(c, &sf, errw)
	if rc >= 0 {
		return rc
	}
	lib := filepath.Join(*libnrt, builder.LibnrtFile)
	if _, err := os.Stat(lib); err != nil {
		return c.Errorf(errw, "%s: %v (build it first: make libnrt, or --libnrt DIR)", lib, err)
	}
	t, err := builder.Open(release)
	if err != nil {
		return c.Errorf(errw, "%v", err)
	}
	p, err := t.BuildLibnccom(*libnrt, *dir, builder.Libnccom{GitHash: *gitHash, Sanitize: *sanitize})
	if err != nil {
		return c.Errorf(errw, "%v", err)
	}
	fmt.Fprintf(out, "%s\n", p)
	if s, err := describeLibnrt(p); err == nil {
		fmt.Fprintf(out, "  %s\n", s)
	}
	return cli.ExitOK
}
