package spec

import (
	"path"
	"sort"
	"strings"
)

// File is what one spec file holds: the rows a release directory built in
// memory (`nrtabi release new`) puts in that file. Its fields are the TOML
// tables the loader decodes a file into.
type File = fileDoc

// Assemble builds the release whose directory dir would hold files (file
// name -> rows), as LoadDirWithParents builds one read from dir: each row is
// placed in its file, the release derives from parents found in root (when
// root is not "") then among the embedded releases, and the result is
// resolved and validated. Nothing is read from dir or written anywhere.
func Assemble(dir, root string, files map[string]*File) (*Spec, error) {
	dir = strings.TrimSuffix(dir, "/")
	s := &Spec{Dir: dir, index: map[string]*posIndex{}}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names) // the loader's order: files sorted by name
	var errs Errors
	for _, n := range names {
		name := path.Join(dir, n)
		s.Files = append(s.Files, name)
		idx := newPosIndex()
		// A library table is there when the file would hold one.
		if r := files[n].Release; r != nil {
			for key, lib := range map[string]Library{"release.libnrt": r.LibNRT, "release.libnccom": r.LibNCCOM} {
				if lib.written() {
					idx.put(key, Pos{File: name})
				}
			}
		}
		errs = append(errs, s.addDoc(name, files[n], idx)...)
	}
	return assemble(s, errs, path.Base(dir), nextTo(root))
}

// Kinds returns the removal's keys by [remove] key, as Writer.Remove takes
// them; kinds with no key are left out.
func (r Removal) Kinds() map[string][]string {
	out := map[string][]string{}
	for _, k := range r.kinds() {
		if len(k.names) > 0 {
			out[k.kind] = k.names
		}
	}
	return out
}

// written reports whether Writer.Release writes the library's table.
func (l Library) written() bool { return l.SONAME != "" || l.File != "" }

// File writes the tables of f in the order spec files list them: the
// release with its counts, slot table and [remove], then the rows. Notes
// (contradictions) and link behaviours have no writer and are left out;
// nothing that writes a File (`release new`) holds them.
func (w *Writer) File(f *File) {
	if f.Release != nil {
		w.Release(*f.Release)
	}
	if f.Counts != nil {
		w.Counts(*f.Counts)
	}
	if f.Table != nil {
		w.SlotTable(*f.Table)
	}
	if f.Remove != nil {
		w.Remove(f.Remove.Kinds())
	}
	for _, n := range f.Nodes {
		w.Node(n)
	}
	for _, r := range f.Forward {
		w.Forward(r)
	}
	for _, r := range f.Reverse {
		w.Reverse(r)
	}
	for _, c := range f.Constants {
		w.Constant(c)
	}
	for _, m := range f.Messages {
		w.Message(m)
	}
	for _, o := range f.Opaques {
		w.OpaqueType(o)
	}
	for _, e := range f.Enums {
		w.Enum(e)
	}
	for _, st := range f.Structs {
		w.Struct(st)
	}
}
