//go:build tools

// Package tools pins the versions of the Go tools the Makefile runs, so that
// `go run` builds exactly those.
package tools

import (
	_ "honnef.co/go/tools/cmd/staticcheck"
)
