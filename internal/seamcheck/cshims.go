package seamcheck

import (
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// The C shims of the reverse callbacks (runtime/nrt/reverse.c) are outside the
// Go call graph. CheckShims compiles reverse.c the way cgo does (the
// package's CFLAGS, the _cgo_export.h `go tool cgo` writes for it) and reads
// the object's undefined symbols: what the shims call or read outside their
// own file. None may be a forward entry point. The trampolines are inline
// functions, so a call of one shows as a read of the slot table.

// ShimsFile is the C file of the shims inside runtime/nrt.
const ShimsFile = "reverse.c"

// forwardSymbol is a C symbol on the forward side: a trampoline or neuron*
// entry point, the slot table and its machinery, or the handoff that loads
// libnccom. The net plugin's handle and error text, which
// nrt_get_libnccl_net reports, are not.
func forwardSymbol(name string) bool {
	switch name {
	case "nrt_nccl_net_handle", "nrt_nccl_net_error":
		return false
	case "nrt_handoff_run":
		return true
	}
	return strings.HasPrefix(name, "nccl") || strings.HasPrefix(name, "neuron") || strings.HasPrefix(name, "nrt_nccl_")
}

// ShimResult is what the object of reverse.c refers to outside itself.
type ShimResult struct {
	Undefined []string // every undefined symbol
	Forward   []string // the forward ones among them
}

type goList struct {
	Dir        string
	ImportPath string
	CgoFiles   []string
	CgoCFLAGS  []string
}

// CheckShims compiles runtime/nrt's reverse.c (or the Overlay's text for it)
// in a temporary directory and lists its undefined symbols.
func CheckShims(cfg Config) (*ShimResult, error) {
	cmd := exec.Command("go", append(append([]string{"list"}, cfg.buildFlags()...), "-json", Package)...)
	cmd.Dir = cfg.Dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("seamcheck: go list %s: %w", Package, err)
	}
	var p goList
	if err := json.Unmarshal(out, &p); err != nil {
		return nil, fmt.Errorf("seamcheck: go list %s: %w", Package, err)
	}
	tmp, err := os.MkdirTemp("", "seamcheck-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	// _cgo_export.h declares the Go side of the shims.
	objdir, hdr, srcdir := filepath.Join(tmp, "obj"), filepath.Join(tmp, "hdr"), filepath.Join(tmp, "src")
	for _, d := range []string{objdir, hdr, srcdir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, err
		}
	}
	args := append([]string{"tool", "cgo", "-objdir", objdir, "-importpath", p.ImportPath, "-exportheader", filepath.Join(hdr, "_cgo_export.h"), "--"}, p.CgoCFLAGS...)
	args = append(args, p.CgoFiles...)
	cgo := exec.Command("go", args...)
	cgo.Dir = p.Dir
	if msg, err := cgo.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("seamcheck: go tool cgo: %w\n%s", err, msg)
	}

	src := filepath.Join(p.Dir, ShimsFile)
	text, ok := cfg.Overlay[src]
	if !ok {
		if text, err = os.ReadFile(src); err != nil {
			return nil, err
		}
	}
	csrc := filepath.Join(srcdir, ShimsFile)
	if err := os.WriteFile(csrc, text, 0o644); err != nil {
		return nil, err
	}
	obj := filepath.Join(tmp, "reverse.o")
	gcc := append([]string{"-c", "-O2", "-std=gnu11", "-Wall", "-Werror", "-fPIC", "-I", hdr, "-I", p.Dir}, p.CgoCFLAGS...)
	gcc = append(gcc, "-o", obj, csrc)
	if err := cc.Run("", gcc...); err != nil {
		return nil, fmt.Errorf("seamcheck: compiling %s: %w", ShimsFile, err)
	}
	f, err := elf.Open(obj)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("seamcheck: symbols of %s: %w", obj, err)
	}
	res := &ShimResult{}
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF || s.Name == "" {
			continue
		}
		res.Undefined = append(res.Undefined, s.Name)
		if forwardSymbol(s.Name) {
			res.Forward = append(res.Forward, s.Name)
		}
	}
	sort.Strings(res.Undefined)
	sort.Strings(res.Forward)
	return res, nil
}
