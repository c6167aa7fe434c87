package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// View is the stable JSON form of a spec (nrtabi spec show --format json):
// one member per kind that has a view, in the order of kinds. Addresses are
// hexadecimal strings.
type View struct {
	parts []viewPart
}

type viewPart struct {
	key   string
	value any
}

// MarshalJSON writes the parts as one object, in order.
func (v View) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range v.parts {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(p.key)
		if err != nil {
			return nil, err
		}
		val, err := json.Marshal(p.value)
		if err != nil {
			return nil, fmt.Errorf("view of %s: %w", p.key, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ReleaseView identifies the release.
type ReleaseView struct {
	Name        string `json:"name"`
	DerivedFrom string `json:"derived_from,omitempty"`
	// The versions the release describes, when it knows them.
	RuntimeVersion     string  `json:"runtime_version,omitempty"`
	CollectivesVersion string  `json:"collectives_version,omitempty"`
	LibNRT             Library `json:"libnrt"`
	LibNCCOM           Library `json:"libnccom"`
	// Headers is how a release made from headers compiled them
	// (docs/spec-format.md#header-provenance); nil otherwise.
	Headers *Headers `json:"headers,omitempty"`
}

// VersionNodeView is a version node.
type VersionNodeView struct {
	Name   string `json:"name"`
	Index  int    `json:"index"`
	Base   bool   `json:"base"`
	Parent string `json:"parent,omitempty"`
}

// SlotTableView is the forward slot table.
type SlotTableView struct {
	Base   string `json:"base"`
	Top    string `json:"top"`
	Stride uint64 `json:"stride"`
	Order  string `json:"order"`
}

// ForwardView is one forward row.
type ForwardView struct {
	Name           string    `json:"name"`
	Index          int       `json:"index"`
	Slot           string    `json:"slot"`
	Trampoline     string    `json:"trampoline"`
	Guarded        bool      `json:"guarded"`
	Guard          string    `json:"guard"`
	Group          string    `json:"group"`
	NCCOMAddr      string    `json:"nccom_addr"`
	TrampolineAddr string    `json:"trampoline_addr"`
	Signature      Signature `json:"signature"`
	C              string    `json:"c"`
	Conf           Conf      `json:"conf"`
}

// ReverseView is one reverse row.
type ReverseView struct {
	Name       string    `json:"name"`
	Version    string    `json:"version"`
	Shape      string    `json:"shape"`
	Group      string    `json:"group"`
	Addr       string    `json:"addr"`
	Target     string    `json:"target,omitempty"`
	TargetArgs []string  `json:"target_args,omitempty"`
	Signature  Signature `json:"signature"`
	C          string    `json:"c"`
	Conf       Conf      `json:"conf"`
}

// ConstantView is one constant.
type ConstantView struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Value any    `json:"value"`
	Conf  Conf   `json:"conf"`
}

// EnumView is one enum.
type EnumView struct {
	Name   string      `json:"name"`
	Size   int         `json:"size"`
	Values []EnumValue `json:"values"`
	Conf   Conf        `json:"conf"`
}

// MessageView is one exact string.
type MessageView struct {
	ID    string `json:"id"`
	Where string `json:"where"`
	Text  string `json:"text"`
	Conf  Conf   `json:"conf"`
}

// StructView is one struct layout.
type StructView struct {
	Name    string       `json:"name"`
	Size    int          `json:"size"`
	Align   int          `json:"align"`
	Side    string       `json:"side,omitempty"`
	Packed  bool         `json:"packed,omitempty"`
	Prefix  bool         `json:"prefix,omitempty"`
	Fields  []FieldView  `json:"fields"`
	Opaque  []OpaqueView `json:"opaque"`
	Conf    Conf         `json:"conf"`
	Aliases []string     `json:"aliases,omitempty"`
	// Absent are the fields the runtime knows that this release's struct
	// lacks (docs/spec-format.md#absent-fields).
	Absent []AbsentView `json:"absent,omitempty"`
}

// AbsentView is a field the release lacks: its stable name and the type it
// has where present.
type AbsentView struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Conf Conf   `json:"conf"`
}

// FieldView is one known field.
type FieldView struct {
	Name   string `json:"name"`
	Offset int    `json:"offset"`
	Size   int    `json:"size"`
	Type   string `json:"type"`
	Conf   Conf   `json:"conf"`
	// Stable is the field's stable name where it differs from Name
	// (docs/spec-format.md#stable-field-names); Range its declared values.
	Stable string  `json:"stable,omitempty"`
	Range  []int64 `json:"range,omitempty"`
}

// OpaqueView is an undescribed byte range.
type OpaqueView struct {
	Offset int `json:"offset"`
	Size   int `json:"size"`
}

func hexAddr(v uint64) string { return fmt.Sprintf("%#x", v) }

// View builds the JSON form.
func (s *Spec) View() View {
	var v View
	for _, k := range kinds {
		if key, val := k.view(s); key != "" {
			v.parts = append(v.parts, viewPart{key, val})
		}
	}
	return v
}

func viewRelease(s *Spec) any {
	v := ReleaseView{Name: s.Release.Name, DerivedFrom: s.Release.DerivedFrom,
		RuntimeVersion: s.Release.RuntimeVersion, CollectivesVersion: s.Release.CollectivesVersion, LibNRT: s.Release.LibNRT, LibNCCOM: s.Release.LibNCCOM}
	if h := s.Release.Headers; h.Written() {
		v.Headers = &h
	}
	return v
}

func viewSlotTable(s *Spec) any {
	return SlotTableView{Base: hexAddr(s.SlotTable.Base), Top: hexAddr(s.SlotTable.Top), Stride: s.SlotTable.Stride, Order: s.SlotTable.Order}
}

func viewVersionNodes(s *Spec) any {
	return viewRows(s.VersionNodes, func(n VersionNode) VersionNodeView { return VersionNodeView{n.Name, n.Index, n.Base, n.Parent} })
}

// viewRows is each row's view, nil for no rows (null in JSON).
func viewRows[T, V any](rows []T, view func(T) V) []V {
	var out []V
	for _, r := range rows {
		out = append(out, view(r))
	}
	return out
}

func viewForward(s *Spec) any {
	return viewRows(s.ByIndex(), func(f *Forward) ForwardView {
		return ForwardView{
			Name: f.Name, Index: f.Index, Slot: hexAddr(f.Slot), Trampoline: f.Trampoline,
			Guarded: f.Guard == Guarded, Guard: f.Guard, Group: f.Group,
			NCCOMAddr: hexAddr(f.NCCOMAddr), TrampolineAddr: hexAddr(f.TrampolineAddr),
			Signature: f.Signature, C: f.Signature.C(f.Name), Conf: f.Conf,
		}
	})
}

func viewReverse(s *Spec) any {
	return viewRows(s.Reverse, func(r Reverse) ReverseView {
		return ReverseView{
			Name: r.Name, Version: r.Version, Shape: r.Shape, Group: r.Group, Addr: hexAddr(r.Addr),
			Target: r.Target, TargetArgs: r.TargetArgs, Signature: r.Signature, C: r.Signature.C(r.Name), Conf: r.Conf,
		}
	})
}

func viewConstants(s *Spec) any {
	return viewRows(s.Constants, func(k Constant) ConstantView { return ConstantView{k.Name, k.Type, k.Value, k.Conf} })
}

func viewEnums(s *Spec) any {
	return viewRows(s.Enums, func(e Enum) EnumView { return EnumView{e.Name, e.Size, e.Values, e.Conf} })
}

func viewMessages(s *Spec) any {
	return viewRows(s.Messages, func(m Message) MessageView { return MessageView{m.ID, m.Where, m.Text, m.Conf} })
}

func viewStructs(s *Spec) any {
	return viewRows(s.Structs, func(st *Struct) StructView {
		sv := StructView{Name: st.Name, Size: st.Size, Align: st.Align(), Side: st.Side, Packed: st.Packed,
			Prefix: st.Prefix, Conf: st.Conf, Aliases: st.Aliases, Fields: []FieldView{}, Opaque: []OpaqueView{}}
		for _, f := range st.Fields {
			sv.Fields = append(sv.Fields, FieldView{Name: f.Name, Offset: f.Offset, Size: f.T.Size(), Type: f.T.String(), Conf: f.Conf, Range: f.Range})
			if f.StableName() != f.Name {
				sv.Fields[len(sv.Fields)-1].Stable = f.StableName()
			}
		}
		for _, o := range st.Opaque {
			sv.Opaque = append(sv.Opaque, OpaqueView{o.Offset, o.Size})
		}
		for _, a := range st.Absent {
			sv.Absent = append(sv.Absent, AbsentView{Name: a.Name, Type: a.Type, Conf: a.Conf})
		}
		return sv
	})
}
