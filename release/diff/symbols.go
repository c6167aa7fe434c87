package diff

import (
	"fmt"
	"strings"

	"github.com/nrtabi/nrtabi/spec"
)

func sigString(sg spec.Signature) string {
	parts := make([]string, len(sg.Params))
	for i, p := range sg.Params {
		parts[i] = p.Type
	}
	return sg.Returns + " (" + strings.Join(parts, ", ") + ")"
}

func (d *differ) forward() {
	var added, removed []*spec.Forward
	for i := range d.old.Forward {
		o := &d.old.Forward[i]
		n := d.new.ForwardByName(o.Name)
		if n == nil || n.Name != o.Name {
			removed = append(removed, o)
			continue
		}
		d.forwardPair(o, n)
	}
	for i := range d.new.Forward {
		n := &d.new.Forward[i]
		if o := d.old.ForwardByName(n.Name); o == nil || o.Name != n.Name {
			added = append(added, n)
		}
	}
	// A symbol that left one slot and another that arrived in the same slot
	// with the same signature is a rename.
	for _, o := range removed {
		matched := false
		for j, n := range added {
			if n != nil && n.Slot == o.Slot && n.Index == o.Index && n.Signature.Prototype() == o.Signature.Prototype() {
				d.add("forward", ForwardRenamed, Incompatible, o.Name, o.Name, n.Name,
					fmt.Sprintf("slot %#x, dlsym #%d: libnrt dlsyms the new name", n.Slot, n.Index))
				added[j] = nil
				matched = true
				break
			}
		}
		if !matched {
			d.add("forward", ForwardRemoved, Incompatible, o.Name, fmt.Sprintf("dlsym #%d, slot %#x", o.Index, o.Slot), "",
				"a libnrt that still dlsyms it fails the all-or-nothing load")
		}
	}
	for _, n := range added {
		if n == nil {
			continue
		}
		d.add("forward", ForwardAdded, Incompatible, n.Name, "", fmt.Sprintf("dlsym #%d, slot %#x, via %s", n.Index, n.Slot, n.Trampoline),
			"a libnccom without it fails the all-or-nothing load")
	}
	ot, nt := d.old.SlotTable, d.new.SlotTable
	if ot.Stride != nt.Stride || ot.Order != nt.Order {
		d.add("forward", TableChanged, Incompatible, "slot_table", fmt.Sprintf("stride %d %s", ot.Stride, ot.Order), fmt.Sprintf("stride %d %s", nt.Stride, nt.Order), "")
	}
}

func (d *differ) forwardPair(o, n *spec.Forward) {
	if o.Slot != n.Slot || o.Index != n.Index {
		d.add("forward", ForwardMoved, Informational, o.Name, fmt.Sprintf("dlsym #%d, slot %#x", o.Index, o.Slot), fmt.Sprintf("dlsym #%d, slot %#x", n.Index, n.Slot),
			"libnrt-internal: the slot table is private to libnrt")
	}
	if o.Signature.Prototype() != n.Signature.Prototype() {
		a, b := sigString(o.Signature), sigString(n.Signature)
		d.add("forward", ForwardSignature, Incompatible, o.Name, a, b, "")
	}
	if o.Guard != n.Guard || o.Trampoline != n.Trampoline {
		d.add("forward", ForwardGuard, Informational, o.Name, o.Trampoline+" "+o.Guard, n.Trampoline+" "+n.Guard, "libnrt-internal")
	}
	if o.NCCOMAddr != n.NCCOMAddr && o.NCCOMAddr != 0 && n.NCCOMAddr != 0 {
		d.add("forward", ForwardAddress, Informational, o.Name, fmt.Sprintf("%#x", o.NCCOMAddr), fmt.Sprintf("%#x", n.NCCOMAddr), "definer address in libnccom")
	}
}

func (d *differ) reverse() {
	for i := range d.old.Reverse {
		o := &d.old.Reverse[i]
		n := d.new.ReverseByName(o.Name)
		if n == nil {
			d.add("reverse", ReverseRemoved, Incompatible, o.Name, "@"+o.Version, "", "libnccom's import no longer resolves: the load fails")
			continue
		}
		if n.Version != o.Version {
			d.add("reverse", ReverseReversioned, Incompatible, o.Name, "@"+o.Version, "@"+n.Version, "libnccom binds the old version")
		}
		if o.Signature.Prototype() != n.Signature.Prototype() {
			a, b := sigString(o.Signature), sigString(n.Signature)
			d.add("reverse", ReverseSignature, Incompatible, o.Name, a, b, "")
		}
		if o.Shape != n.Shape || strings.Join(o.TargetArgs, ",") != strings.Join(n.TargetArgs, ",") {
			d.add("reverse", ReverseShape, Informational, o.Name, o.Shape+" "+strings.Join(o.TargetArgs, ","), n.Shape+" "+strings.Join(n.TargetArgs, ","), "libnrt-internal")
		}
		if o.Addr != n.Addr && o.Addr != 0 && n.Addr != 0 {
			d.add("reverse", ReverseAddress, Informational, o.Name, fmt.Sprintf("%#x", o.Addr), fmt.Sprintf("%#x", n.Addr), "definer address in libnrt")
		}
	}
	for _, n := range d.new.Reverse {
		if d.old.ReverseByName(n.Name) == nil {
			d.add("reverse", ReverseAdded, Incompatible, n.Name, "", "@"+n.Version, "a libnrt without it fails libnccom's load")
		}
	}
}
