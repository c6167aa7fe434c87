package main

import (
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/spec"
)

// synShape is the synthetic object's shape: units of structs of members.
type synShape struct{ units, structs, members int }

// fullSyn is 102 units of 500 structs of 150 members (51 000 structs,
// about 102 MiB of .debug_info); quickSyn is the quick mode's.
var (
	fullSyn  = synShape{units: 102, structs: 500, members: 150}
	quickSyn = synShape{units: 2, structs: 5, members: 5}
)

// synthetic builds (once, cached) a shared object from the shape's generated
// C units plus one unit holding every struct of the generated header.
func synthetic(cache string, shape synShape) (string, error) {
	synUnits, synStructs, synMembers := shape.units, shape.structs, shape.members
	header, err := filepath.Abs(filepath.Join("generated", spec.Default, "c", gen.HeaderName))
	if err != nil {
		return "", err
	}
	// The cached object is only as current as the header it holds.
	text, err := os.ReadFile(header)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(text)
	dir := filepath.Join(cache, fmt.Sprintf("synthetic-fn-%dx%dx%d-%x", synUnits, synStructs, synMembers, sum[:6]))
	out := filepath.Join(dir, "libsynthetic.so")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	slog.Info("generating the synthetic object (once per header)", "units", synUnits, "structs", synUnits*synStructs, "dir", dir)
	types := []string{"int", "long", "char", "short", "unsigned int", "void *", "double", "unsigned char"}
	var srcs []string
	for u := range synUnits {
		var b strings.Builder
		for s := range synStructs {
			fmt.Fprintf(&b, "struct syn%d_s%d {\n", u, s)
			for m := range synMembers {
				fmt.Fprintf(&b, "\t%s m%d;\n", types[(s+m)%len(types)], m)
			}
			b.WriteString("};\n")
		}
		// One exported function a unit: abidw reads nothing from an
		// object without ELF symbols ("Could not read ELF symbol
		// information"), and the whole-library rows ask it for an answer.
		fmt.Fprintf(&b, "int syn%d_fn(void) { return %d; }\n", u, u)
		name := fmt.Sprintf("syn%03d.c", u)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			return "", err
		}
		srcs = append(srcs, name)
	}
	last := "zz_spec_types.c"
	if err := os.WriteFile(filepath.Join(dir, last), []byte("#define _GNU_SOURCE\n#include \""+header+"\"\n"), 0o644); err != nil {
		return "", err
	}
	srcs = append(srcs, last)
	// Compile on every core, then link in unit order (the spec unit last).
	var wg sync.WaitGroup
	errs := make(chan error, len(srcs))
	sem := make(chan struct{}, runtime.NumCPU())
	var objs []string
	for _, src := range srcs {
		obj := strings.TrimSuffix(src, ".c") + ".o"
		objs = append(objs, obj)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := cc.Run(dir, "-c", "-fPIC", "-g", "-fno-eliminate-unused-debug-types", "-o", obj, src); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return "", err
	}
	tmp := out + ".tmp"
	if err := cc.Run(dir, append([]string{"-shared", "-o", tmp}, objs...)...); err != nil {
		return "", err
	}
	for _, o := range append(objs, srcs...) {
		os.Remove(filepath.Join(dir, o))
	}
	return out, os.Rename(tmp, out)
}
