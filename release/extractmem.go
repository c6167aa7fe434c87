package release

import "github.com/nrtabi/nrtabi/readers/elfread"

// openDebug opens the file Extract reads and finds its DWARF: from disk, or
// through opt.Open and opt.Mem for a package member (docs/packages.md).
func openDebug(path string, opt ExtractOptions) (*elfread.Debug, error) {
	lk := elfread.DefaultLookup(opt.DebugDirs)
	if opt.Open == nil {
		return elfread.OpenDebug(path, lk)
	}
	obj, err := opt.Open(path)
	if err != nil {
		return nil, err
	}
	lk.Mem = opt.Mem
	return elfread.OpenDebugFile(obj, lk)
}
