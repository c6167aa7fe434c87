package diff

import "fmt"

// Waived says a waiver accepted the change (docs/waivers.md): it is still
// reported, marked, and counts toward no exit bit.
type Waived struct {
	At    string `json:"at"` // the waiver's file:line:col
	Why   string `json:"why"`
	Who   string `json:"who"`
	Until string `json:"until"` // its last day, YYYY-MM-DD
}

func (w *Waived) note() string {
	return fmt.Sprintf("waived by %s (%s, until %s): %s", w.At, w.Who, w.Until, w.Why)
}

// Waive marks every change accept answers with a waiver and recounts the
// summary from the others. accept sees each fact, never a consequence.
func (r *Report) Waive(accept func(Change) *Waived) {
	for i := range r.Changes {
		r.Changes[i].Waived = accept(r.Changes[i])
	}
	r.count()
}
