package cli

import (
	"context"

	"github.com/nrtabi/nrtabi/internal/debuginfod"
	"github.com/nrtabi/nrtabi/readers/elfread"
)

// Debuginfod is the download hook of the commands' debug lookup
// (elfread.Lookup.Fetch): the debuginfod client DEBUGINFOD_URLS configures
// (docs/layoutcheck.md#how-debug-info-is-found), each file it brings checked to be an ELF file with
// the build-id asked for. nil when the variable names no server: nothing is
// downloaded. The reader itself links no network code; this is where the
// commands join the two.
func Debuginfod() elfread.Fetcher {
	c := debuginfod.FromEnv(elfread.VerifyBuildID)
	if c == nil {
		return nil
	}
	return func(ctx context.Context, buildID string) (string, error) {
		return c.Fetch(ctx, buildID, debuginfod.Debuginfo)
	}
}
