package compat

import (
	"debug/elf"
	"fmt"
	"strings"

	"github.com/nrtabi/nrtabi/spec"
)

// linkRow is the spec's measured [[link_behaviour]] row of variant, or nil.
func (p *predictor) linkRow(variant string) *spec.LinkBehaviour {
	for i := range p.home.LinkBehaviours {
		if p.home.LinkBehaviours[i].Variant == variant {
			return &p.home.LinkBehaviours[i]
		}
	}
	return nil
}

func rowCite(l *spec.LinkBehaviour, variant string) string {
	if l == nil {
		return "[[link_behaviour]] " + variant
	}
	return fmt.Sprintf("[[link_behaviour]] %s, measured on glibc %s", l.Variant, l.Glibc)
}

// reverseNeed is one libnccom import libnrt must satisfy at dlopen.
type reverseNeed struct {
	name, version string // version "" for an unversioned import
	weak          bool
}

// reverseNeeds are libnccom's imports that libnrt answers: those versioned
// against libnrt's SONAME, and unversioned ones the spec's reverse leg
// names or that lie in libnrt's namespaces (nec_*, nrt_*).
func (p *predictor) reverseNeeds() []reverseNeed {
	names := map[string]bool{}
	for _, sp := range p.set.Specs {
		for _, rv := range sp.Reverse {
			names[rv.Name] = true
		}
	}
	soname := p.nrt.soname()
	var out []reverseNeed
	for i := range p.nc.dyn.Syms {
		s := &p.nc.dyn.Syms[i]
		if s.Section != elf.SHN_UNDEF || s.Name == "" {
			continue
		}
		ours := s.Version != "" && soname != "" && s.Library == soname
		if s.Version == "" && (names[s.Name] || strings.HasPrefix(s.Name, "nec_") || strings.HasPrefix(s.Name, "nrt_")) {
			ours = true
		}
		if ours {
			out = append(out, reverseNeed{name: s.Name, version: s.Version, weak: elf.ST_BIND(s.Info) == elf.STB_WEAK})
		}
	}
	return out
}

// reverse is the dlopen stage: libnccom's needs on libnrt, each held to
// the measured [[link_behaviour]] rows (spec linker.toml). libnrt dlopens
// libnccom with RTLD_NOW, so every import binds at dlopen.
func (p *predictor) reverse() {
	// libnccom names libnrt by SONAME (DT_NEEDED): another name is another
	// file, which ld.so looks for on the search path, not the one given.
	for _, n := range p.nc.obj.Needed {
		if strings.HasPrefix(n, "libnrt.so") && n != p.nrt.soname() {
			p.add(Finding{Class: Reverse, Fatal: true, Subject: n,
				Message: fmt.Sprintf("libnccom needs %s (DT_NEEDED); the libnrt given is %q: ld.so loads another file, or fails with \"%s: cannot open shared object file\"", n, p.nrt.soname(), n),
				Fix:     "pair libnccom with the libnrt its DT_NEEDED names, or relink it against this one"})
			return
		}
	}
	needs := p.reverseNeeds()
	hasVersioned := false
	for _, n := range needs {
		hasVersioned = hasVersioned || n.version != ""
	}
	if hasVersioned && !p.nrt.versioned() {
		// No .gnu.version at all: ld.so's check_match asserts.
		row := p.linkRow("unversioned-library")
		p.add(Finding{Class: Reverse, Fatal: true, Subject: needsNode(needs),
			Message: fmt.Sprintf("libnccom needs %s of libnrt, and libnrt carries no version information at all: ld.so aborts (%s: %q)",
				needsNode(needs), rowCite(row, "unversioned-library"), rowMessage(row)),
			Fix: fixRelease("libnrt", p.set.nearest(p.homeName(), func(sp *spec.Spec) bool { return len(sp.VersionNodes) > 0 }),
				"link libnrt with its version script (make libnrt)")})
		return
	}
	// A .gnu.version without .gnu.version_d (a Go c-shared library linked
	// without a script): the version check skips the file and lookup takes
	// base definitions ([[link_behaviour]] unversioned-go-library).
	noDefs := len(p.nrt.dyn.Defs) == 0
	missingNode := map[string]bool{}
	var baseFallback []string
	var baseNode string
	defer func() {
		if len(baseFallback) == 0 {
			return
		}
		row := p.linkRow("base-fallback")
		p.add(Finding{Class: Reverse, Subject: baseFallback[0] + "@" + baseNode,
			Message: fmt.Sprintf("libnrt exports %d of libnccom's @%s imports (first %s) at the base version: glibc falls back to the base definition and it loads (%s); other loaders may not",
				len(baseFallback), baseNode, baseFallback[0], rowCite(row, "base-fallback"))})
	}()
	for _, n := range needs {
		if noDefs && n.version != "" {
			if p.nrt.exported(n.name) == nil && !n.weak {
				p.add(Finding{Class: Reverse, Fatal: true, Subject: n.name + "@" + n.version,
					Message: fmt.Sprintf("libnccom imports %s@%s; libnrt (no version definitions) does not export %s: dlopen fails with \"undefined symbol: %s\"", n.name, n.version, n.name, n.name),
					Fix:     p.nodeFix(n)})
			} else if p.nrt.exported(n.name) != nil && !missingNode[n.version] {
				missingNode[n.version] = true
				row := p.linkRow("unversioned-go-library")
				p.add(Finding{Class: Reverse, Subject: n.version,
					Message: fmt.Sprintf("libnrt defines no version nodes but has a version table: ld.so skips the check of %s and binds base definitions, so it loads (%s); the shipped libnrt defines the node", n.version, rowCite(row, "unversioned-go-library"))})
			}
			continue
		}
		if n.version != "" && !p.nrt.definesNode(n.version) {
			if !missingNode[n.version] {
				missingNode[n.version] = true
				row := p.linkRow("no-node")
				p.add(Finding{Class: Reverse, Fatal: true, Subject: n.version,
					Message: fmt.Sprintf("libnccom needs version node %s of %s (first for %s); libnrt defines no such node: dlopen fails with %q (%s)",
						n.version, p.nrt.soname(), n.name, rowMessage(row), rowCite(row, "no-node")),
					Fix: p.nodeFix(n)})
			}
			continue
		}
		def := p.nrt.exported(n.name)
		switch {
		case def == nil && n.weak:
			continue
		case def == nil:
			row := p.linkRow("not-exported")
			at := n.name
			if n.version != "" {
				at += "@" + n.version
			}
			p.add(Finding{Class: Reverse, Fatal: true, Subject: at,
				Message: fmt.Sprintf("libnccom imports %s; libnrt does not export %s: dlopen fails with \"undefined symbol: %s\" (%s)", at, n.name, n.name, rowCite(row, "not-exported")),
				Fix:     p.nodeFix(n)})
		case n.version == "":
			p.add(Finding{Class: Reverse, Subject: n.name,
				Message: fmt.Sprintf("libnccom imports %s unversioned: ld.so binds it to libnrt's default definition, so it loads, but the shipped libnccom versions every callback (spec linker.toml; check reports it as a breach)", n.name)})
		default:
			got := p.nrt.dyn.VersionName(def)
			if got == n.version {
				continue
			}
			if got == "" {
				baseFallback = append(baseFallback, n.name)
				baseNode = n.version
				continue
			}
			p.add(Finding{Class: Reverse, Fatal: true, Subject: n.name + "@" + n.version,
				Message: fmt.Sprintf("libnccom imports %s@%s; libnrt exports it under %s: dlopen fails with \"undefined symbol: %s, version %s\"", n.name, n.version, got, n.name, n.version),
				Fix:     p.nodeFix(n)})
		}
	}
}

// nodeFix: the nearest release whose libnrt defines the need.
func (p *predictor) nodeFix(n reverseNeed) string {
	sp := p.set.nearest(p.homeName(), func(sp *spec.Spec) bool {
		for _, rv := range sp.Reverse {
			if rv.Name == n.name && (n.version == "" || rv.Version == n.version) {
				return true
			}
		}
		return false
	})
	return fixRelease("libnrt", sp, "rebuild libnccom against this libnrt so its imports name what libnrt exports")
}

func needsNode(needs []reverseNeed) string {
	for _, n := range needs {
		if n.version != "" {
			return n.version
		}
	}
	return ""
}

func rowMessage(l *spec.LinkBehaviour) string {
	if l == nil || l.Message == "" {
		return "(no message measured)"
	}
	return l.Message
}
