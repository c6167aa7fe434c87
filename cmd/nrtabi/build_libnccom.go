package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/nrtabi/nrtabi/runtime/builder"
)

// `make libnccom`: the reference libnccom (runtime/libnccom).
func init() {
	register(&command{name: "build libnccom", summary: "build the reference libnccom.so.2 (hand-written C over the generated header) against a built libnrt.so.1", run: buildLibnccom})
}

func buildLibnccom(args []string, out, errw io.Writer) int {
	fs := newFlags("build libnccom", errw)
	libnrt := fs.String("libnrt", "build", "directory holding the libnrt.so.1 it links against")
	dir := fs.String("out", "build", "directory to write libnccom.so.2 (and the libnccom.so link) to")
	release := fs.String("release", "", "release (default: the default release)")
	gitHash := fs.String("git-hash", "", "git hash the library reports instead of the release's (a skewed build)")
	sanitize := fs.Bool("sanitize", false, "build with AddressSanitizer and UBSan (preload libasan to load it)")
	if rc := parse(fs, args); rc >= 0 {
		return rc
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(errw, "nrtabi build libnccom: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	lib := filepath.Join(*libnrt, builder.LibnrtFile)
	if _, err := os.Stat(lib); err != nil {
		fmt.Fprintf(errw, "nrtabi build libnccom: %s: %v (build it first: make libnrt, or --libnrt DIR)\n", lib, err)
		return exitError
	}
	t, err := builder.Open(*release)
	if err != nil {
		fmt.Fprintf(errw, "nrtabi build libnccom: %v\n", err)
		return exitError
	}
	p, err := t.BuildLibnccom(*libnrt, *dir, builder.Libnccom{GitHash: *gitHash, Sanitize: *sanitize})
	if err != nil {
		fmt.Fprintf(errw, "nrtabi build libnccom: %v\n", err)
		return exitError
	}
	fmt.Fprintf(out, "%s\n", p)
	if s, err := describeLibnrt(p); err == nil {
		fmt.Fprintf(out, "  %s\n", s)
	}
	return exitOK
}
