package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/internal/esc"
	"github.com/nrtabi/nrtabi/layoutcheck"
	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/spec"
)

func init() {
	app.Register(&cli.Command{Name: "extract", Summary: "write spec TOML (a struct fragment) for structs read from a binary's DWARF",
		Synopsis: "[--struct NAME]... [--spec NAME|DIR] [-o FILE.toml] FILE | --headers DIR [--include FILE]...",
		Example:  "extract --struct nec_version_info_t -o fragment.toml build/libnrt.so.1",
		Run:      extractCmd})
}

func extractCmd(c *cli.Command, args []string, out, errw io.Writer) int {
	fs := c.Flags(errw)
	var sf cli.SpecFlag
	sf.Register(fs, "spec", spec.Default, "the release whose struct names to use (and whose structs are extracted by default)")
	outPath := fs.String("o", "", "write the fragment to this file (atomically) instead of stdout")
	headers := fs.String("headers", "", "read the structs from the C headers under this directory (compiled with gcc -g in a temporary directory) instead of a FILE")
	var names, include cli.ListFlag
	fs.Var(&include, "include", "with --headers: a header to read, relative to DIR (repeatable, or a comma list); default every *.h")
	fs.Var(&names, "struct", "struct to extract (repeatable, or a comma list); default: every spec struct the file has")
	var dirs debugDirFlag
	dirs.register(fs)
	pos, rc := c.ParseAnywhere(fs, args)
	if rc >= 0 {
		return rc
	}
	if len(pos) != 1 && *headers == "" || len(pos) != 0 && *headers != "" {
		return c.Usagef(errw, "name exactly one FILE, or --headers DIR")
	}
	if len(include) > 0 && *headers == "" {
		return c.Usagef(errw, "--include names a header under --headers DIR; give --headers too")
	}
	sp, where, err := sf.Load()
	if err != nil {
		return reportSpecError(c, errw, where, err)
	}
	all := len(names) == 0
	if all {
		for _, st := range sp.Structs {
			names = append(names, st.Name)
		}
	}
	if *headers != "" {
		h, err := layoutcheck.CompileHeadersContext(context.Background(), *headers, layoutcheck.HeaderOptions{Include: include, Spec: sp})
		if err != nil {
			return layoutError(c, errw, err)
		}
		defer h.Close()
		for _, n := range h.Notes {
			fmt.Fprintf(errw, "%s: note: %s\n", c.FullName(), esc.String(n))
		}
		for _, w := range h.Warnings {
			fmt.Fprintf(errw, "%s: warning: %s\n", c.FullName(), esc.String(w))
		}
		pos = []string{h.Object}
	}
	var buf bytes.Buffer
	// Structs without a spec layout (declarations, empty GNU C structs) are
	// refused one by one: the fragment of the others is still written, the
	// refusal goes to stderr and the exit status says not everything was.
	done := cli.ExitOK
	var refused *release.RefusedError
	if err := release.Extract(pos[0], &buf, release.ExtractOptions{Names: names, SkipAbsent: all, Spec: sp, DebugDirs: dirs.get()}); errors.As(err, &refused) {
		done = c.Errorf(errw, "%v", err)
	} else if err != nil {
		return layoutError(c, errw, err)
	}
	if *outPath == "" {
		if _, err := out.Write(buf.Bytes()); err != nil {
			return c.Errorf(errw, "%v", err)
		}
		return done
	}
	if err := writeAtomic(*outPath, buf.Bytes()); err != nil {
		return c.Errorf(errw, "%v", err)
	}
	return done
}

// writeAtomic replaces path only once the whole content is on disk.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
