package main

import (
	"flag"
	"strings"

	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/layoutcheck"
	"github.com/nrtabi/nrtabi/spec"
)

// compileFlags are the compile options of a header tree, the same on
// release new, check, show and diff: which headers (--include), where
// what they include lives (-I), and the flags the code that includes them
// is compiled with (--cflags); docs/layoutcheck.md#headers-as-input.
type compileFlags struct {
	include, incdirs cli.ListFlag
	cflags           string
	noPrelude        bool
}

func (f *compileFlags) register(fs *flag.FlagSet, what string) {
	fs.Var(&f.include, "include", what+": a header to read, relative to the directory (repeatable, or a comma list); default every *.h")
	fs.Var(&f.incdirs, "I", what+": a directory of headers the tree includes and does not ship (repeatable, or a comma list)")
	fs.StringVar(&f.cflags, "cflags", "", what+": compiler flags the code including the headers is built with, as one shell-like word list (-DNAME=V -include FILE -std=gnu11)")
	fs.BoolVar(&f.noPrelude, "no-prelude", false, what+": compile the headers without the prelude of C standard headers (stddef.h, stdint.h, stdbool.h, assert.h, limits.h)")
}

// given is whether any of the options was set.
func (f *compileFlags) given() bool {
	return len(f.include) > 0 || len(f.incdirs) > 0 || f.cflags != "" || f.noPrelude
}

func (f *compileFlags) options(sp *spec.Spec) layoutcheck.HeaderOptions {
	return layoutcheck.HeaderOptions{Include: f.include, IncludeDirs: f.incdirs, CFlags: strings.Fields(f.cflags), NoPrelude: f.noPrelude, Spec: sp}
}

// provenance is how the tree was compiled, as [release.headers] records
// it (docs/spec-format.md#header-provenance): the files force-included
// (--cflags -include FILE) apart from the other flags, the -I directories
// as given, and the order when the headers to read were named or reordered.
func (f *compileFlags) provenance(tree string, h *layoutcheck.Headers) spec.Headers {
	p := spec.Headers{Tree: tree, Prelude: h.Prelude, IncludeDirs: f.incdirs}
	words := strings.Fields(f.cflags)
	for i := 0; i < len(words); i++ {
		if words[i] == "-include" && i+1 < len(words) {
			p.Include = append(p.Include, words[i+1])
			i++
			continue
		}
		p.CFlags = append(p.CFlags, words[i])
	}
	switch {
	case len(h.Order) > 0:
		p.Order = h.Order
	case len(f.include) > 0:
		p.Order = f.include
	}
	if p.Prelude == nil {
		p.Prelude = []string{}
	}
	return p
}
