package compat

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nrtabi/nrtabi/spec"
)

// netPlugin is the soft plugin load after a good handoff: libnrt dlopens
// the plugin and keeps it only if it exports one of the tables it knows,
// newest first; libnccom then binds the newest it understands
// (docs/net-seam.md#plugin-choice). The tables the libraries know are read
// from their own data (the names they dlsym); only when neither holds any
// are they the release's [release.libnccom_net] objects, and the report
// says so.
func (p *predictor) netPlugin(pl *side) {
	known := p.nrt.tableStrings()
	if nc := p.nc.tableStrings(); len(nc) > 0 {
		if len(known) == 0 {
			known = nc
		} else {
			known = slices.DeleteFunc(known, func(n string) bool { return !slices.Contains(nc, n) })
		}
	}
	if len(known) == 0 {
		for _, o := range p.home.Release.LibNCCOMNet.Objects {
			known = append(known, o.Name)
		}
		p.r.Unseen = append(p.r.Unseen, "the plugin tables the libraries dlsym: neither names one in its data; release "+p.homeName()+"'s [release.libnccom_net] objects are used")
	}
	offered := pl.exportedTables()
	for _, o := range offered {
		if slices.Contains(known, o) {
			return
		}
	}
	slices.Sort(known)
	sp := p.set.nearest(p.homeName(), func(sp *spec.Spec) bool {
		for _, o := range sp.Release.LibNCCOMNet.Objects {
			if slices.Contains(offered, o.Name) {
				return true
			}
		}
		return false
	})
	what := "no ncclNetPlugin_v* table"
	if len(offered) > 0 {
		what = strings.Join(offered, ", ")
	}
	p.add(Finding{Class: NetPlugin, Fatal: true, Subject: what,
		Message: fmt.Sprintf("the plugin exports %s; the libraries take %s: libnrt refuses it (\"%s is not a net plugin: it exports none of ...\") and the collectives run without a network",
			what, strings.Join(known, ", "), pl.path),
		Fix: fixRelease("libnccom and libnrt", sp, "a plugin built with the table "+known[len(known)-1])})
}
