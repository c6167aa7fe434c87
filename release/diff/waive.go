package diff

import "github.com/nrtabi/nrtabi/internal/render"

// Waive marks every change accept answers with a waiver (docs/waivers.md)
// and recounts the summary from the others. accept sees each fact, never a
// consequence.
func (r *Report) Waive(accept func(Change) *render.Waiver) {
	for i := range r.Changes {
		r.Changes[i].Waived = accept(r.Changes[i])
	}
	r.count()
}
