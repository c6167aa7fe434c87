package main

import (
	"io"

	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/runtime/builder"
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
	registerRelease(fs, &sf)
	gitHash := fs.String("git-hash", "", "git hash the library reports instead of the release's (a skewed build)")
	sanitize := fs.Bool("sanitize", false, "build with AddressSanitizer and UBSan (preload libasan to load it)")
	if rc := c.Parse(fs, args, errw); rc >= 0 {
		return rc
	}
	t, rc := openTree(c, &sf, *libnrt, errw)
	if rc >= 0 {
		return rc
	}
	p, err := t.BuildLibnccom(*libnrt, *dir, builder.Libnccom{GitHash: *gitHash, Sanitize: *sanitize})
	if err != nil {
		return c.Errorf(errw, "%v", err)
	}
	printLibrary(out, p)
	return cli.ExitOK
}
