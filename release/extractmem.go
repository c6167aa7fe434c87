package release

import (
	"context"

	"github.com/nrtabi/nrtabi/readers/elfread"
)

// openDebug opens the file Extract reads and finds its DWARF: from disk, or
// through opt.Open and opt.Mem for a package member (docs/packages.md).
func openDebug(ctx context.Context, path string, opt ExtractOptions) (*elfread.Debug, error) {
	lk := elfread.Lookup{Dirs: opt.DebugDirs, Fetch: opt.Fetch}
	if opt.Open == nil {
		return elfread.OpenDebug(ctx, path, lk)
	}
	obj, err := opt.Open(path)
	if err != nil {
		return nil, err
	}
	lk.Mem = opt.Mem
	return elfread.OpenDebugFile(ctx, obj, lk)
}
