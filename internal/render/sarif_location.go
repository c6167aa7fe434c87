package render

import (
	"net/url"
	"path"
	"path/filepath"
	"strings"
)

// locater makes locations relative to the source root; fsRoot: one was
// outside it (FileRootID).
type locater struct {
	root   string
	fsRoot bool
}

// location is a place as SARIF has it: a physical location when the file
// can be named (under the source root when there is one, else under the
// filesystem's root), the logical names always. A relative path is not
// guessed a base: its location keeps the path in its properties
// (docs/sarif.md#locations).
func (lc *locater) location(p Place, msg string) sarifLocation {
	root := lc.root
	l := sarifLocation{}
	if msg != "" {
		l.Message = &sarifText{Text: msg}
	}
	for _, g := range p.Logical {
		l.LogicalLocations = append(l.LogicalLocations, sarifLogical(g))
	}
	if p.File == "" {
		if p.Unresolved != "" {
			l.Properties = map[string]any{"unresolved": p.Unresolved}
			if p.Line > 0 {
				l.Properties["line"] = p.Line
			}
		}
		return l
	}
	file := filepath.ToSlash(p.File)
	al := sarifArtifactLocation{}
	switch {
	case root == "":
		al.URI = fileURI(file)
		if !path.IsAbs(file) {
			al.URI = relURI(file)
		}
	case path.IsAbs(file):
		clean := path.Clean(file)
		rel, ok := under(clean, root)
		al.URI, al.URIBaseID = relURI(rel), SourceRootID
		if !ok {
			if clean == "/" {
				l.Properties = map[string]any{"declaredIn": p.File}
				return l
			}
			al.URI, al.URIBaseID, lc.fsRoot = relURI(strings.TrimPrefix(clean, "/")), FileRootID, true
		}
	default:
		// A relative path is relative to what named it, not to the source
		// root: refused a uri rather than guessed one.
		l.Properties = map[string]any{"declaredIn": p.File}
		return l
	}
	pl := &sarifPhysical{ArtifactLocation: al}
	if p.Line > 0 {
		pl.Region = &sarifRegion{StartLine: p.Line}
	}
	l.PhysicalLocation = pl
	return l
}

// under is file relative to root, when it lies under it.
func under(file, root string) (string, bool) {
	if root == "/" {
		return strings.TrimPrefix(file, "/"), file != "/"
	}
	rel, ok := strings.CutPrefix(file, root+"/")
	return rel, ok && rel != ""
}

// fileURI is the file uri of an absolute path, every byte outside a
// path's own characters escaped.
func fileURI(p string) string { return "file://" + relURI(p) }

// relURI is a relative path as a uri reference; a first segment holding
// a colon would read as a scheme, so it is led by "./".
func relURI(p string) string {
	u := (&url.URL{Path: p}).EscapedPath()
	if first, _, _ := strings.Cut(u, "/"); strings.Contains(first, ":") {
		u = "./" + u
	}
	return u
}
