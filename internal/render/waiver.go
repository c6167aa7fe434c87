package render

import "fmt"

// Note is the line text and JUnit print under a waived fact
// (docs/waivers.md#waived-expired-unused). The caller escapes it.
func (w *Waiver) Note() string {
	return fmt.Sprintf("waived by %s (%s, until %s): %s", w.At, w.Who, w.Until, w.Why)
}
