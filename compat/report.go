package compat

// Class is a verdict class: where the load stops, or what it gets wrong
// silently (docs/nrtabi-compat.md#verdict-classes).
type Class string

// The classes, in the handoff's order after "loads".
const (
	Loads      Class = "loads"
	Reverse    Class = "reverse-needs" // dlopen: a libnccom need on libnrt is not met
	Dlsym      Class = "dlsym"         // the version probe or another neuron* entry point is not exported
	CompatGate Class = "compat-gate"   // the probe's compatibility id is not the one libnrt expects
	NetPlugin  Class = "net-plugin"    // the plugin exports no table the libraries take
	Layout     Class = "layout"        // loads, but a shared struct's layout differs
	Unknown    Class = "unknown"       // a fact the verdict needs could not be read
)

// Layout verdicts.
const (
	LayoutSame    = "same"
	LayoutDiffers = "differs"
	LayoutUnknown = "unknown"
)

// Exit statuses, as check's: 0 the pairing loads and every fact was seen,
// 4 nothing seen stops it but some fact was not seen, 8 it does not load
// or disagrees silently. Errors are 1.
const (
	ExitLoads   = 0
	ExitUnknown = 4
	ExitFails   = 8
)

// Finding is one fact that decides or colours the verdict.
type Finding struct {
	Class Class `json:"class"`
	// Subject is the symbol, version node, compatibility id or field.
	Subject string `json:"subject"`
	Message string `json:"message"`
	// Fix: the nearest release of the spec set whose pairing loads, or
	// what to rebuild.
	Fix string `json:"fix,omitempty"`
	// Fatal: the load (or, for a net-plugin finding, the plugin's load)
	// stops here.
	Fatal bool `json:"fatal"`
}

// Report is the prediction for one pairing.
type Report struct {
	Libnrt   string `json:"libnrt"`
	Libnccom string `json:"libnccom"`
	Plugin   string `json:"plugin,omitempty"`
	// Release is the spec release the rules were taken from, ReleaseFrom
	// how it was chosen (read from libnrt, or given).
	Release     string    `json:"release"`
	ReleaseFrom string    `json:"release_from"`
	Verdict     Class     `json:"verdict"`
	Layout      string    `json:"layout"`
	Findings    []Finding `json:"findings"`
	// Unseen lists the facts that could not be read.
	Unseen []string `json:"unseen,omitempty"`
	Exit   int      `json:"exit"`
}

// decide sets Verdict and Exit from the findings, which are in the
// handoff's stage order: the first fatal finding of a load stage (dlopen,
// probe, gate, dlsym), else a silent layout difference, else a refused
// plugin, else unknown when a load fact was not seen, else loads.
func (r *Report) decide(loadUnseen bool) {
	r.Verdict, r.Exit = Loads, ExitLoads
	for _, f := range r.Findings {
		if f.Fatal && (f.Class == Reverse || f.Class == Dlsym || f.Class == CompatGate) {
			r.Verdict, r.Exit = f.Class, ExitFails
			return
		}
	}
	if loadUnseen {
		r.Verdict, r.Exit = Unknown, ExitUnknown
		return
	}
	for _, c := range []Class{Layout, NetPlugin} {
		for _, f := range r.Findings {
			if f.Class == c && f.Fatal {
				r.Verdict, r.Exit = c, ExitFails
				return
			}
		}
	}
	if len(r.Unseen) > 0 || r.Layout != LayoutSame {
		r.Exit = ExitUnknown
	}
}
