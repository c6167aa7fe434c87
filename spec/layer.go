package spec

import (
	"fmt"
	"path"
	"reflect"
	"sort"
	"strings"
)

// File is what one spec file holds, built in memory (`nrtabi release new`):
// the tables of Rows it sets — a single table when it is not the zero value,
// a kind of rows when it has any — and the row keys its [remove] drops, by
// kind key ("forward", "version_node", ...).
type File struct {
	Rows   *Spec
	Remove map[string][]string
}

// doc is f as the value the decoder would have made of the file.
func (f *File) doc(name string) (reflect.Value, Errors) {
	doc := reflect.New(fileDocType()).Elem()
	rows := f.Rows
	if rows == nil {
		rows = &Spec{}
	}
	for i, k := range kinds {
		doc.Field(i).Set(k.fromRows(rows))
	}
	if len(f.Remove) == 0 {
		return doc, nil
	}
	var errs Errors
	rm := reflect.New(doc.Field(len(kinds)).Type().Elem())
	known := map[string]bool{}
	for j, k := range removable() {
		known[k.key()] = true
		rm.Elem().Field(j).Set(reflect.ValueOf(f.Remove[k.key()]))
	}
	for key := range f.Remove {
		if !known[key] {
			errs = append(errs, &Error{Pos: Pos{File: name}, Rule: "unknown-key", Msg: fmt.Sprintf("[remove] has no kind %q", key)})
		}
	}
	doc.Field(len(kinds)).Set(rm)
	return doc, errs
}

// Assemble builds the release whose directory dir would hold files (file
// name -> rows), as LoadDirWithParents builds one read from dir: each row is
// placed in its file, the release derives from parents found in root (when
// root is not "") then among the embedded releases, and the result is
// resolved and validated. Nothing is read from dir or written anywhere.
func Assemble(dir, root string, files map[string]*File) (*Spec, error) {
	dir = strings.TrimSuffix(dir, "/")
	s := &Spec{Dir: dir, index: map[string]*filePositions{}}
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
		if f := files[n]; f.Rows != nil && f.Rows.Release.Name != "" {
			for _, l := range f.Rows.Release.libraries() {
				if l.lib.written() {
					idx.put("release."+l.key, Pos{File: name})
				}
			}
			if f.Rows.Release.Headers.Written() {
				idx.put("release."+headersKey, Pos{File: name})
			}
		}
		doc, derrs := files[n].doc(name)
		errs = append(errs, derrs...)
		errs = append(errs, s.addDoc(name, doc, &filePositions{rows: idx, file: name})...)
	}
	return assemble(s, errs, path.Base(dir), withBudget(nextTo(root), &budget{}))
}

// written reports whether Writer.Release writes the library's table: one
// read from a file, or one naming a file or SONAME.
func (l Library) written() bool { return l.Pos.File != "" || l.SONAME != "" || l.File != "" }

// File writes f in the order spec files list their tables: the single
// tables, [remove], then the rows, each group in the order of kinds.
func (w *Writer) File(f *File) {
	rows := f.Rows
	if rows == nil {
		rows = &Spec{}
	}
	for _, k := range kinds {
		if k.single() {
			k.writeRows(w, rows)
		}
	}
	w.Remove(f.Remove)
	for _, k := range kinds {
		if !k.single() {
			k.writeRows(w, rows)
		}
	}
}
