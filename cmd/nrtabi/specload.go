package main

import (
	"flag"
	"fmt"

	"github.com/nrtabi/nrtabi/spec"
)

// specFlags are the shared --release / --dir flags.
type specFlags struct {
	release, dir string
}

func (f *specFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.release, "release", spec.Default, "embedded release to use")
	fs.StringVar(&f.dir, "dir", "", "read the spec from this directory instead of the embedded one")
}

func (f *specFlags) load() (*spec.Spec, error) {
	if f.dir != "" {
		return spec.LoadDir(f.dir)
	}
	return spec.Load(f.release)
}

// where names the spec being read, for messages.
func (f *specFlags) where() string {
	if f.dir != "" {
		return f.dir
	}
	return fmt.Sprintf("spec/%s (embedded)", f.release)
}
