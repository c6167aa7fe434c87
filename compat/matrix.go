package compat

import (
	"context"
	"fmt"

	"github.com/nrtabi/nrtabi/spec"
)

// Cell is one pairing of the release matrix: the libnrt of one release
// with the libnccom of another, judged from their spec rows by the rules
// Predict applies to binaries (docs/nrtabi-compat.md#the-release-matrix).
type Cell struct {
	Libnrt   string `json:"libnrt"`
	Libnccom string `json:"libnccom"`
	Verdict  Class  `json:"verdict"`
	// Notes index Matrix.Notes: why, one per failing fact.
	Notes []int `json:"notes,omitempty"`
}

// Matrix is every libnrt release × every libnccom release of a set.
type Matrix struct {
	Releases []string `json:"releases"`
	Cells    []Cell   `json:"cells"`
	Notes    []string `json:"notes"`
	// NoteClasses is each note's class: the stage its fact fails (a cell
	// refused at the gate may have a layout note too).
	NoteClasses []Class `json:"note_classes"`
}

// noter returns the function that numbers m's notes: a note already made
// keeps its number, a new one is appended with its class.
func (m *Matrix) noter() func(c Class, s string) int {
	index := map[string]int{}
	return func(c Class, s string) int {
		if i, ok := index[s]; ok {
			return i
		}
		index[s] = len(m.Notes)
		m.Notes = append(m.Notes, s)
		m.NoteClasses = append(m.NoteClasses, c)
		return index[s]
	}
}

// ReleaseMatrix judges every pairing of the set's releases from the spec.
func ReleaseMatrix(set *Set) *Matrix {
	m := &Matrix{}
	note := m.noter()
	for _, a := range set.Specs {
		m.Releases = append(m.Releases, a.Release.Name)
	}
	for _, a := range set.Specs {
		for _, b := range set.Specs {
			c := Cell{Libnrt: a.Release.Name, Libnccom: b.Release.Name, Verdict: Loads}
			for _, r := range pairReasons(a, b) {
				if c.Verdict == Loads {
					c.Verdict = r.class
				}
				c.Notes = append(c.Notes, note(r.class, r.text))
			}
			m.Cells = append(m.Cells, c)
		}
	}
	return m
}

type reason struct {
	class Class
	text  string
}

// pairReasons are the failing facts of libnrt release a with libnccom
// release b, in the handoff's stage order, then the layouts.
func pairReasons(a, b *spec.Spec) []reason {
	var out []reason
	nodes := map[string]bool{}
	for _, n := range a.VersionNodes {
		nodes[n.Name] = true
	}
	defined := map[string]string{}
	for _, rv := range a.Reverse {
		defined[rv.Name] = rv.Version
	}
	for _, rv := range b.Reverse {
		switch v, ok := defined[rv.Name]; {
		case rv.Version != "" && !nodes[rv.Version]:
			out = append(out, reason{Reverse, fmt.Sprintf("libnccom %s needs node %s, which libnrt %s does not define", b.Release.Name, rv.Version, a.Release.Name)})
		case !ok:
			out = append(out, reason{Reverse, fmt.Sprintf("libnccom %s imports %s@%s, which libnrt %s does not export", b.Release.Name, rv.Name, rv.Version, a.Release.Name)})
		case v != rv.Version:
			out = append(out, reason{Reverse, fmt.Sprintf("libnccom %s imports %s@%s; libnrt %s exports it @%s", b.Release.Name, rv.Name, rv.Version, a.Release.Name, v)})
		}
	}
	order := a.ByIndex()
	if len(order) > 0 && b.ForwardByName(order[0].Name) == nil {
		out = append(out, reason{Dlsym, fmt.Sprintf("libnccom %s has no version probe %s", b.Release.Name, order[0].Name)})
	}
	ia, okA := compatID(a)
	ib, okB := compatID(b)
	if okA && okB && ia != ib {
		out = append(out, reason{CompatGate, fmt.Sprintf("libnrt %s expects compatibility id %d, libnccom %s reports %d", a.Release.Name, ia, b.Release.Name, ib)})
	}
	for _, f := range order[min(1, len(order)):] {
		if b.ForwardByName(f.Name) == nil {
			out = append(out, reason{Dlsym, fmt.Sprintf("libnrt %s dlsyms %s, which libnccom %s does not export", a.Release.Name, f.Name, b.Release.Name)})
		}
	}
	for _, st := range a.Structs {
		if st.Side != "both" {
			continue
		}
		o := b.StructByName(st.Name)
		if o == nil {
			continue
		}
		if inA, inB, ok := specStructDiff(st, o); ok {
			out = append(out, reason{Layout, fmt.Sprintf("%s: %s in libnrt %s, %s in libnccom %s", st.Name, inA, a.Release.Name, inB, b.Release.Name)})
		}
	}
	return out
}

// specStructDiff words the first layout fact a and b do not share, as
// each side has it; ok false when they share every one.
func specStructDiff(a, b *spec.Struct) (inA, inB string, ok bool) {
	// A prefix struct models only the start of a larger object: its size
	// is not the object's, its fields still are.
	if a.Size != b.Size && !a.Prefix && !b.Prefix {
		return fmt.Sprintf("%d bytes", a.Size), fmt.Sprintf("%d bytes", b.Size), true
	}
	bf := map[string]spec.Field{}
	for _, f := range b.Fields {
		bf[f.Name] = f
	}
	for _, f := range a.Fields {
		if o, found := bf[f.Name]; found && (o.Offset != f.Offset || o.Size != f.Size) {
			return fmt.Sprintf("%s at %d size %d", f.Name, f.Offset, f.Size), fmt.Sprintf("at %d size %d", o.Offset, o.Size), true
		}
	}
	return "", "", false
}

// Pairing names one argument of an input matrix and the two libraries it
// holds (a directory or package of one installed set).
type Pairing struct {
	Name             string
	Libnrt, Libnccom Named
}

// InputMatrix predicts every libnrt of sets against every libnccom of sets
// from the files, as Predict judges one pairing: the matrix of what a user
// has installed (docs/nrtabi-compat.md#the-release-matrix). Each cell's
// notes are its fatal findings and the facts it could not see.
func InputMatrix(ctx context.Context, set *Set, sets []Pairing, opt Options) (*Matrix, error) {
	m := &Matrix{}
	note := m.noter()
	for _, a := range sets {
		m.Releases = append(m.Releases, a.Name)
	}
	for _, a := range sets {
		for _, b := range sets {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			r, err := PredictInputs(ctx, set, a.Libnrt, b.Libnccom, Named{}, opt)
			if err != nil {
				return nil, fmt.Errorf("libnrt of %s with libnccom of %s: %w", a.Name, b.Name, err)
			}
			c := Cell{Libnrt: a.Name, Libnccom: b.Name, Verdict: r.Verdict}
			for _, f := range r.Findings {
				if f.Fatal {
					c.Notes = append(c.Notes, note(f.Class, f.Message))
				}
			}
			for _, u := range r.Unseen {
				c.Notes = append(c.Notes, note(Unknown, "not seen: "+u))
			}
			m.Cells = append(m.Cells, c)
		}
	}
	return m, nil
}
