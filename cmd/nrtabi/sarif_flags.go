package main

import (
	"flag"
	"fmt"
	"os"
)

// sarifFlags is --source-root of check and diff: with --format sarif,
// the directory the log's locations are relative to, under the uriBaseId
// SRCROOT, as GitHub code scanning wants them (docs/sarif.md#locations).
type sarifFlags struct{ root string }

func (s *sarifFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.root, "source-root", "", "with --format sarif: locations under this directory are relative to it (uriBaseId SRCROOT), others to / (FSROOT), as code scanning wants; default: absolute file uris")
}

// check refuses --source-root without --format sarif, and one that is not
// a directory.
func (s *sarifFlags) check(format string) error {
	if s.root == "" {
		return nil
	}
	if format != "sarif" {
		return fmt.Errorf("--source-root is where the locations of --format sarif are relative to; give --format sarif too")
	}
	if st, err := os.Stat(s.root); err != nil || !st.IsDir() {
		return fmt.Errorf("--source-root %s: not a directory; name the checkout the headers and specs are in", s.root)
	}
	return nil
}
