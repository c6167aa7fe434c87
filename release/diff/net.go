package diff

import (
	"fmt"
	"strings"

	"github.com/nrtabi/nrtabi/spec"
)

// Net plugin change kinds (docs/nrtabi-diff.md#net-plugin).
const (
	NetTableAdded   = "net-table-added"
	NetTableRemoved = "net-table-removed"
	NetTableSize    = "net-table-size"
	NetTableBound   = "net-table-bound"
	NetTableAddress = "net-table-address"
	NetPlugin       = "net-plugin-identity"
)

// netGroup is the report's group of the third boundary: the plugin's
// table objects, and the rows of spec net_plugin.toml the plugin and
// libnccom share (the table and properties types, the handle sizes and
// pointer kinds), moved here from structs and constants so the plugin's
// changes read together.
const netGroup = "net"

// netRow reports whether a struct or constant belongs to the net plugin
// boundary: the table and properties types (ncclNet*), the handle-size,
// pointer-kind and table-symbol constants (NCCL_NET_*, NCCL_PTR_*).
func netRow(name string) bool {
	return strings.HasPrefix(name, "ncclNet") || strings.HasPrefix(name, "NCCL_NET_") || strings.HasPrefix(name, "NCCL_PTR_")
}

// net compares the plugin's table objects ([release.libnccom_net] object).
// Their severities follow the plugin check's rules (layoutcheck
// contract_net.go): libnccom takes the newest table it knows, so losing
// the bound table breaks it and losing another does not; a table object of
// another size than the type libnccom reads it as is read at the wrong
// places. The types themselves are graded by package grade (structs.go).
func (d *differ) net() {
	ol, nl := d.old.Release.LibNCCOMNet, d.new.Release.LibNCCOMNet
	// A side without tables (a struct fragment, a release that names no
	// plugin) does not speak to them: nothing to compare, not all gained
	// or lost (release new refuses a plugin with no table).
	if len(ol.Objects) == 0 || len(nl.Objects) == 0 {
		return
	}
	if ob, nb := ol.OwnBuildID(), nl.OwnBuildID(); ob != "" && nb != "" && ob != nb {
		d.add(netGroup, NetPlugin, Informational, "libnccom-net build-id", ob, nb, "another build of the plugin")
	}
	for _, o := range ol.Objects {
		n := object(nl, o.Name)
		if n == nil {
			if o.Bound {
				d.add(netGroup, NetTableRemoved, Incompatible, o.Name, slots(o), "", "the table the old side's libnccom binds: it finds no table of its version")
			} else {
				d.add(netGroup, NetTableRemoved, Compatible, o.Name, slots(o), "", "not the bound table: libnccom takes a newer one")
			}
			continue
		}
		if o.Slots != n.Slots {
			d.tableSize(o, *n)
		}
		if o.Bound != n.Bound {
			d.add(netGroup, NetTableBound, Compatible, o.Name, boundWord(o.Bound), boundWord(n.Bound), "libnccom now binds another of the plugin's tables")
		}
		if o.Addr != n.Addr {
			d.add(netGroup, NetTableAddress, Informational, o.Name, fmt.Sprintf("%#x", o.Addr), fmt.Sprintf("%#x", n.Addr), "")
		}
	}
	for _, n := range nl.Objects {
		if object(ol, n.Name) == nil {
			d.add(netGroup, NetTableAdded, Compatible, n.Name, "", slots(n), "a table version the old side's plugin did not export")
		}
	}
}

// tableSize words a table object's change of size against the type
// libnccom reads it as on each side. When the type kept its size and the
// new object is that size, the old row's count was not the type's (the
// 2.31.24 seed's ncclNetPlugin_v5: the distance to the next object, not
// its members): libnccom of either side reads the same members, so the
// boundary holds. Otherwise the table changed under libnccom.
func (d *differ) tableSize(o, n spec.DataObject) {
	name := spec.NetTableType(o.Name)
	ot, nt := d.old.StructByName(name), d.new.StructByName(name)
	c := Change{Kind: NetTableSize, Severity: Incompatible, Group: netGroup, Subject: o.Name, Old: slots(o), New: slots(n),
		OldSize: num(int64(o.Slots) * spec.NetSlotSize), NewSize: num(int64(n.Slots) * spec.NetSlotSize)}
	switch {
	case ot != nil && nt != nil && ot.Size == nt.Size && uint64(nt.Size) == uint64(n.Slots)*spec.NetSlotSize:
		c.Severity = Compatible
		c.Detail = fmt.Sprintf("%s is %d bytes (%d members) on both sides and the new object is that size: the old side's %d slots (%d bytes) are not its type's members",
			name, nt.Size, nt.Size/spec.NetSlotSize, o.Slots, o.Slots*spec.NetSlotSize)
		if pad := o.Slots*spec.NetSlotSize - nt.Size; pad > 0 {
			c.Detail += fmt.Sprintf(" (%d bytes past them: the distance to the next object)", pad)
		}
	case ot != nil && uint64(ot.Size) != uint64(n.Slots)*spec.NetSlotSize:
		c.Detail = fmt.Sprintf("the old side's libnccom reads it as %s of %d bytes (%d members): it would read the new table's members at the wrong places or past its end",
			name, ot.Size, ot.Size/spec.NetSlotSize)
	default:
		c.Detail = "libnccom reads the table by its type: its members moved"
	}
	// The type's own change of size is the cause, graded by package grade
	// (a struct-size fact, or one a member added or removed forces): the
	// object's change goes under that fact, not beside it.
	if nt != nil && uint64(nt.Size) == uint64(n.Slots)*spec.NetSlotSize {
		for i := range d.changes {
			x := &d.changes[i]
			resized := false
			x.Walk(func(y Change, _ int) { resized = resized || y.Kind == StructSize && y.Subject == name })
			if resized {
				x.Consequences = append(x.Consequences, c)
				return
			}
		}
	}
	d.changes = append(d.changes, c)
}

// regroupNet moves the net plugin's struct and constant changes to the net
// group.
func (d *differ) regroupNet() {
	for i := range d.changes {
		c := &d.changes[i]
		if c.Group != "structs" && c.Group != "constants" {
			continue
		}
		subject, _, _ := strings.Cut(c.Subject, ".")
		if netRow(subject) {
			c.Group = netGroup
		}
	}
}

func object(l spec.Library, name string) *spec.DataObject {
	for i := range l.Objects {
		if l.Objects[i].Name == name {
			return &l.Objects[i]
		}
	}
	return nil
}

func slots(o spec.DataObject) string {
	return fmt.Sprintf("%d slots (%d bytes)", o.Slots, o.Slots*spec.NetSlotSize)
}

func boundWord(b bool) string {
	if b {
		return "bound"
	}
	return "not bound"
}
