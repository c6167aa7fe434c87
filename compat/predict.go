package compat

import (
	"context"
	"fmt"
	"strings"

	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/spec"
)

// ReleaseSymbol is the data symbol an nrtabi-built libnrt names its release
// in (docs/runtime-boundary.md#release-identity); compat reads it to know
// which release's compatibility id the gate expects.
const ReleaseSymbol = "nrtabi_release_name"

// maxReleaseName bounds that name.
const maxReleaseName = 256

// Options are a prediction's inputs besides the files.
type Options struct {
	// Release is the release whose rules apply when libnrt names none
	// (a libnrt not built by nrtabi); "" refuses to guess: the compat id
	// it expects is then unseen.
	Release string
	// Lookup finds each side's separate debug files.
	Lookup elfread.Lookup
}

// Predict reads the three files and predicts what loading them together
// does. plugin may be "". Errors are the files' (unreadable, not ELF).
func Predict(ctx context.Context, set *Set, libnrt, libnccom, plugin string, opt Options) (*Report, error) {
	var pl Input
	if plugin != "" {
		pl = fileInput(plugin)
	}
	return PredictInputs(ctx, set, Named{libnrt, fileInput(libnrt)}, Named{libnccom, fileInput(libnccom)}, Named{plugin, pl}, opt)
}

// Named is an Input with the name reports give it ("pkg.deb!/usr/lib/x").
type Named struct {
	Name string
	In   Input // nil: no such side (only the plugin may be absent)
}

// PredictInputs is Predict over inputs found by the caller (a package's
// member, with the debug files of the packages beside it).
func PredictInputs(ctx context.Context, set *Set, libnrt, libnccom, plugin Named, opt Options) (*Report, error) {
	var r *Report
	err := elfread.Guard(func() error {
		var err error
		r, err = predict(ctx, set, libnrt, libnccom, plugin, opt)
		return err
	})
	return r, err
}

func predict(ctx context.Context, set *Set, libnrt, libnccom, plugin Named, opt Options) (*Report, error) {
	if len(set.Specs) == 0 {
		return nil, fmt.Errorf("no spec release to predict from")
	}
	if libnrt.In == nil || libnccom.In == nil {
		return nil, fmt.Errorf("libnrt and libnccom are both needed")
	}
	nrt, err := openSide(libnrt.Name, libnrt.In, opt.Lookup)
	if err != nil {
		return nil, err
	}
	defer nrt.close()
	nc, err := openSide(libnccom.Name, libnccom.In, opt.Lookup)
	if err != nil {
		return nil, err
	}
	defer nc.close()
	var pl *side
	if plugin.In != nil {
		if pl, err = openSide(plugin.Name, plugin.In, opt.Lookup); err != nil {
			return nil, err
		}
		defer pl.close()
	}
	r := &Report{Libnrt: libnrt.Name, Libnccom: libnccom.Name}
	if pl != nil {
		r.Plugin = plugin.Name
	}
	home, known, err := homeRelease(set, nrt, opt, r)
	if err != nil {
		return nil, err
	}
	p := &predictor{set: set, home: home, expectKnown: known, nrt: nrt, nc: nc, r: r}
	p.reverse()
	loadUnseen := p.forward()
	if pl != nil {
		p.netPlugin(pl)
	}
	r.Layout = p.layout(ctx)
	r.decide(loadUnseen)
	if r.Verdict != Loads && r.Verdict != Unknown && r.Verdict != NetPlugin {
		if fix := p.wholeFix(r.Verdict); fix != "" {
			for i := range r.Findings {
				if f := &r.Findings[i]; f.Fatal && f.Class == r.Verdict {
					f.Fix = fix + "; or " + rebuildPart(f.Fix)
					break
				}
			}
		}
	}
	return r, nil
}

// homeRelease is the release libnrt names, or the one given; known says
// whether the compat id libnrt expects is known (not when it names none
// and none is given).
func homeRelease(set *Set, nrt *side, opt Options, r *Report) (sp *spec.Spec, known bool, err error) {
	name, rerr := nrt.readCString(ReleaseSymbol, maxReleaseName)
	if rerr == nil {
		if sp = set.ByName(name); sp == nil {
			return nil, false, fmt.Errorf("%s was built for release %q, which the spec set does not hold (it has %s): pass --spec DIR of that release", nrt.path, name, setNames(set))
		}
		r.Release, r.ReleaseFrom = name, "read from libnrt ("+ReleaseSymbol+")"
		return sp, true, nil
	}
	if opt.Release == "" {
		sp = set.Specs[len(set.Specs)-1]
		r.Release, r.ReleaseFrom = sp.Release.Name, "libnrt names no release ("+rerr.Error()+"); symbol rules of the newest release, the compat id it expects is unseen (pass --release)"
		r.Unseen = append(r.Unseen, "the compatibility id libnrt expects: it names no release")
		return sp, false, nil
	}
	if sp = set.ByName(opt.Release); sp == nil {
		return nil, false, fmt.Errorf("--release %s: not in the spec set (it has %s)", opt.Release, setNames(set))
	}
	r.Release, r.ReleaseFrom = sp.Release.Name, "given (--release); libnrt names none"
	return sp, true, nil
}

func setNames(set *Set) string {
	var n []string
	for _, sp := range set.Specs {
		n = append(n, sp.Release.Name)
	}
	return strings.Join(n, ", ")
}

type predictor struct {
	set         *Set
	home        *spec.Spec
	expectKnown bool // the compat id libnrt expects is known
	ncID        struct {
		id uint64
		ok bool
	} // the compat id libnccom's probe stores, when read
	nrt, nc *side
	r       *Report
}

func (p *predictor) add(f Finding) { p.r.Findings = append(p.r.Findings, f) }

// homeName is the release name, for messages.
func (p *predictor) homeName() string { return p.home.Release.Name }

// fixRelease words a fix as "use the libnrt|libnccom of release R", or
// the rebuild when no release of the set fits.
func fixRelease(which string, sp *spec.Spec, rebuild string) string {
	if sp == nil {
		return "no release of the spec set fits: " + rebuild
	}
	return fmt.Sprintf("use a %s of release %s (nearest in the spec set that pairs), or %s", which, sp.Release.Name, rebuild)
}

// rebuildPart is the rebuild a stage's fix (fixRelease) ends with.
func rebuildPart(fix string) string {
	if rest, ok := strings.CutPrefix(fix, "no release of the spec set fits: "); ok {
		return rest
	}
	if i := strings.LastIndex(fix, "), or "); i >= 0 {
		return fix[i+len("), or "):]
	}
	return fix
}
