package main

import (
	"flag"
	"strings"

	"github.com/nrtabi/nrtabi/layoutcheck/elfread"
)

// listFlag collects a repeatable flag; each value may also be a comma list.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

// parseFlagsAnywhere parses flags that may follow positional arguments
// ("nrtabi show NAME FILE --release R"). It returns the positional arguments
// and the exit status to stop with (-1 to go on).
func parseFlagsAnywhere(fs *flag.FlagSet, args []string) ([]string, int) {
	var pos []string
	for {
		if rc := parse(fs, args); rc >= 0 {
			return nil, rc
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, -1
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), -1
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// debugDirs returns the --debug-dir values, or the distribution default.
func debugDirs(l listFlag) []string {
	if len(l) == 0 {
		return elfread.DefaultDebugDirs
	}
	return l
}
