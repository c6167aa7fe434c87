package main

import "github.com/nrtabi/nrtabi/gen/cli"

func init() {
	register(&command{name: "gen", summary: "generate C, linker scripts and Go bindings for a release", run: cli.Run})
}
