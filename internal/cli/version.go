package cli

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/nrtabi/nrtabi/spec"
)

// ModuleVersion is the main module's version as the build recorded it:
// a tag or pseudo-version when installed with go install, "(devel)" when
// built from a checkout.
func ModuleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown: built without module information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	return bi.Main.Path + " " + v
}

// GoVersion is the Go toolchain that built the binary, as the build
// recorded it.
func GoVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.GoVersion != "" {
		return bi.GoVersion
	}
	return runtime.Version()
}

func versionCmd(_ context.Context, c *Command, args []string, out, errw io.Writer) error {
	fs := c.Flags(out, errw)
	if err := c.Parse(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s %s\n", c.app.Name, ModuleVersion())
	fmt.Fprintf(out, "built with %s %s/%s\n", GoVersion(), runtime.GOOS, runtime.GOARCH)
	if c.app.BuiltFor != "" {
		fmt.Fprintf(out, "built for release %s\n", c.app.BuiltFor)
	}
	fmt.Fprintf(out, "embedded spec releases: %s (default %s)\n", strings.Join(spec.Releases(), ", "), spec.Default)
	return nil
}
