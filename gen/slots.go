package gen

import (
	"strings"

	"github.com/nrtabi/nrtabi/spec"
)

type slotView struct {
	Name, FnType string
	Offset       uint64
	Slot         uint64
	Index        int
}

type trampView struct {
	Name, Target, Ret, Params, Args, Guard, Failed string
	Outs                                           string // the NULL test of the out-pointers, "" for none
	Zeros                                          string // every argument 0 (NULL), for the out-pointer probe
	ProbeOut, ProbeN                               string // the probe's struct pointer and size
	Void                                           bool
	Index                                          int
	Slot                                           uint64
}

type slotsData struct {
	Banner, Release, Guard, Header string
	Count                          int
	Base, Top, Stride              uint64
	Sentinel                       string
	SentinelAddr                   uint64
	BySlot                         []slotView
	ByIndex                        []slotView
	Trampolines                    []trampView
}

// SlotsHeader and SlotsSource are the generated forward-table files.
const (
	SlotsHeader = "nrt_slots.h"
	SlotsSource = "nrt_slots.c"
)

func cSlots(s *spec.Spec) ([]File, error) {
	t := s.SlotTable
	d := slotsData{
		Banner: cBanner(s), Release: commentText(s.Release.Name), Header: HeaderName,
		Guard: "NRTABI_" + releaseIdent(s.Release.Name) + "_SLOTS_H",
		Count: len(s.Forward), Base: t.Base, Top: t.Top, Stride: t.Stride,
		Sentinel: commentText(t.Sentinel), SentinelAddr: t.SentinelAddr,
	}
	view := func(f *spec.Forward) slotView {
		return slotView{Name: f.Name, FnType: f.Name + "_fn", Offset: f.Slot - t.Base, Slot: f.Slot, Index: f.Index}
	}
	for _, f := range s.BySlot() {
		d.BySlot = append(d.BySlot, view(f))
	}
	failed := s.MessageByID("nccl_request_failed")
	for _, f := range s.ByIndex() {
		d.ByIndex = append(d.ByIndex, view(f))
		tv := trampView{
			Name: f.Trampoline, Target: f.Name, Ret: cRet(f.Signature), Params: cParams(f.Params),
			Args: cArgs(f.Params), Guard: f.Guard, Void: f.Ret.Kind == spec.KindVoid,
			Failed: cString(strings.Replace(failed.Text, "%s", f.Name, 1)),
			Index:  f.Index, Slot: f.Slot, Outs: outChecks(f.Params),
			Zeros: strings.TrimSuffix(strings.Repeat("0, ", len(f.Params)), ", "),
		}
		if f.Guard == spec.Probe {
			tv.ProbeOut, tv.ProbeN = f.Params[0].Name, f.Params[1].Name
		}
		d.Trampolines = append(d.Trampolines, tv)
	}
	h, err := execTemplate("slots.h.tmpl", d)
	if err != nil {
		return nil, err
	}
	c, err := execTemplate("slots.c.tmpl", d)
	if err != nil {
		return nil, err
	}
	return []File{{Path: "c/" + SlotsHeader, Data: h}, {Path: "c/" + SlotsSource, Data: c}}, nil
}
