package compat

import (
	"fmt"
	"strings"

	"github.com/nrtabi/nrtabi/spec"
)

// maxListed bounds the names a message lists.
const maxListed = 8

// forward is the handoff after dlopen, in its order (runtime/nrt's
// handoff, docs/runtime-boundary.md): dlsym the version probe, gate on
// the compatibility id it writes, then dlsym every other neuron* entry
// point of the release, all or nothing. It reports whether a fact the
// verdict needs went unseen.
func (p *predictor) forward() (unseen bool) {
	order := p.home.ByIndex()
	if len(order) == 0 {
		p.r.Unseen = append(p.r.Unseen, "the forward table: release "+p.homeName()+" lists no neuron* entry point")
		return true
	}
	probe := order[0].Name
	if p.nc.exported(probe) == nil {
		p.add(Finding{Class: Dlsym, Fatal: true, Subject: probe,
			Message: fmt.Sprintf("libnccom does not export the version probe %s (dlsym #0): ncclInit stops before the gate, every slot NULL", probe),
			Fix:     "rebuild libnccom exporting " + probe + " (no release of the boundary does without it)"})
		return false
	}
	unseen = p.gate(probe)
	var missing []string
	for _, f := range order[1:] {
		if p.nc.exported(f.Name) == nil {
			missing = append(missing, f.Name)
		}
	}
	if len(missing) > 0 {
		listed := missing
		if len(listed) > maxListed {
			listed = listed[:maxListed]
		}
		sp := p.set.nearest(p.homeName(), func(sp *spec.Spec) bool {
			for _, m := range missing {
				if sp.ForwardByName(m) != nil {
					return false
				}
			}
			return len(sp.Forward) > 0
		})
		p.add(Finding{Class: Dlsym, Fatal: true, Subject: missing[0],
			Message: fmt.Sprintf("libnccom exports %d of the %d neuron* entry points release %s dlsyms; missing %s: ncclInit fails at the first, %s, and leaves every slot NULL (all or nothing)",
				len(order)-len(missing), len(order), p.homeName(), strings.Join(listed, ", "), missing[0]),
			Fix: fixRelease("libnrt", sp, "rebuild libnccom exporting "+missing[0])})
	}
	return unseen
}

// gate is the compat gate: the id libnccom's probe writes against the
// NCCOM_COMPAT_ID of libnrt's release (spec constants.toml; message
// nccl_incompatible).
func (p *predictor) gate(probe string) (unseen bool) {
	want, wantOK := compatID(p.home)
	wantOK = wantOK && p.expectKnown
	st := p.home.StructByName("nec_version_info_t")
	var off int64 = -1
	if st != nil {
		for _, f := range st.Fields {
			if f.Name == "compatibility_version" {
				off = int64(f.Offset)
			}
		}
	}
	if off < 0 {
		p.r.Unseen = append(p.r.Unseen, "the compatibility id libnccom reports: release "+p.homeName()+" has no nec_version_info_t.compatibility_version")
		return true
	}
	got, gotOK, why := p.nc.probeCompatID(probe, off)
	p.ncID.id, p.ncID.ok = got, gotOK
	if !gotOK {
		p.r.Unseen = append(p.r.Unseen, "the compatibility id libnccom reports: "+why)
		return true
	}
	if !wantOK {
		return true
	}
	if got == want {
		return false
	}
	nrtFix := p.set.nearest(p.homeName(), func(sp *spec.Spec) bool { id, ok := compatID(sp); return ok && id == got })
	fix := fixRelease("libnrt", nrtFix, fmt.Sprintf("rebuild libnccom reporting compatibility id %d (NCCOM_COMPAT_ID of release %s)", want, p.homeName()))
	said := ""
	if m := p.home.MessageByID("nccl_incompatible"); m != nil {
		said = fmt.Sprintf(" (%q)", strings.Replace(m.Text, "%lu", fmt.Sprint(got), 1))
	}
	p.add(Finding{Class: CompatGate, Fatal: true, Subject: fmt.Sprintf("compatibility_version %d", got),
		Message: fmt.Sprintf("libnccom's %s reports compatibility id %d; libnrt of release %s expects %d: ncclInit refuses%s",
			probe, got, p.homeName(), want, said),
		Fix: fix})
	return false
}
