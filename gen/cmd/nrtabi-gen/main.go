// Command nrtabi-gen is `nrtabi gen` without the rest of the CLI: it imports
// nothing that compiles generated code, so `make generate` works even when the
// generated tree is missing or stale.
package main

import (
	"os"

	"github.com/nrtabi/nrtabi/gen/cli"
)

func main() { os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr)) }
