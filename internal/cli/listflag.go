package cli

import "strings"

// ListFlag collects a repeatable flag; each value may also be a comma list
// (blank items are dropped). It is the tree's one list flag type.
type ListFlag []string

func (l *ListFlag) String() string { return strings.Join(*l, ",") }

func (l *ListFlag) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}
