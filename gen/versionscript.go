package gen

import (
	"fmt"
	"sort"

	"github.com/nrtabi/nrtabi/spec"
)

type vsNode struct {
	Name, Parent string
	Symbols      []vsSym
	Local        bool
}

type vsSym struct {
	Name, Comment string
}

type vsData struct {
	Banner, Library string
	Nodes           []vsNode
	Symbols         []vsSym // libnccom: the unversioned exports
}

// Version-script file names.
const (
	LibnrtMap   = "libnrt.map"
	LibnccomMap = "libnccom.map"
)

func versionScripts(s *spec.Spec) ([]File, error) {
	nrt, err := LibnrtVersionScript(s, nil)
	if err != nil {
		return nil, err
	}
	d := vsData{Banner: cBanner(s), Library: commentText(s.Release.LibNCCOM.SONAME)}
	for _, f := range s.ByIndex() {
		d.Symbols = append(d.Symbols, vsSym{Name: f.Name, Comment: fmt.Sprintf("dlsym #%d", f.Index)})
	}
	// ncclGetVersion is upstream's public call, not a dlsym slot: a libnccom
	// answers it with the fork constant (seed 001 §4, NCCOM_NCCL_VERSION).
	// A library that does not define it is still linked: GNU ld passes over
	// a script's names that nothing defines.
	if s.ConstantByName("NCCOM_NCCL_VERSION") != nil {
		d.Symbols = append(d.Symbols, vsSym{Name: "ncclGetVersion", Comment: "NCCOM_NCCL_VERSION, not a dlsym slot"})
	}
	nccom, err := execTemplate("libnccom.map.tmpl", d)
	if err != nil {
		return nil, err
	}
	return []File{{Path: "c/" + LibnrtMap, Data: nrt}, {Path: "c/" + LibnccomMap, Data: nccom}}, nil
}

// LibnrtVersionScript renders libnrt's GNU ld version script: the spec's
// version graph (the BASE node comes from the SONAME and is not written), the
// reverse callbacks under their node, everything else local. extra adds the
// runtime's own entry points: node name -> symbols. They are versioned like
// the callbacks, never left unversioned.
func LibnrtVersionScript(s *spec.Spec, extra map[string][]string) ([]byte, error) {
	d := vsData{Banner: cBanner(s), Library: commentText(s.Release.LibNRT.SONAME)}
	nodes := append([]spec.VersionNode(nil), s.VersionNodes...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Index < nodes[j].Index })
	known := map[string]bool{}
	local := false
	for _, n := range nodes {
		if n.Base {
			continue
		}
		known[n.Name] = true
		v := vsNode{Name: n.Name, Parent: n.Parent}
		for _, r := range s.Reverse {
			if r.Version == n.Name {
				v.Symbols = append(v.Symbols, vsSym{Name: r.Name, Comment: commentText("reverse callback, " + r.Shape)})
			}
		}
		for _, e := range extra[n.Name] {
			v.Symbols = append(v.Symbols, vsSym{Name: e, Comment: "runtime entry point"})
		}
		if !local {
			v.Local, local = true, true
		}
		d.Nodes = append(d.Nodes, v)
	}
	for n := range extra {
		if !known[n] {
			return nil, fmt.Errorf("extra exports name version node %q, which the spec does not declare", n)
		}
	}
	return execTemplate("libnrt.map.tmpl", d)
}
