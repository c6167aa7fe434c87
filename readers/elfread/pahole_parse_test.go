package elfread

import (
	"strings"
	"testing"
)

// TestParsePaholeVtableComment: a nested class's vtable, listed in a
// comment that opens with "{" and closes with "} */", leaves the outer
// class's depth as it was, so its own size is read, not the nested one's
// (cupt's std::thread: 8 bytes, beside a nested _State_impl of 56).
func TestParsePaholeVtableComment(t *testing.T) {
	text := `/* <3e51> /usr/include/c++/12/bits/std_thread.h:73 */
class thread {
	struct _State_impl : _State {
		long int                   _M_func;              /*     8     8 */

		/* vtable has 1 entries: {
		   [2] = _M_run(),
		} */
		/* size: 56, cachelines: 1, members: 2 */
	};

	class id                  _M_id;                 /*     0     8 */

	/* size: 8, cachelines: 1, members: 1 */
};
`
	ps, err := parsePahole(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].Size != 8 || len(ps[0].Members) != 1 || ps[0].Members[0].Name != "_M_id" {
		t.Fatalf("parsed %+v, want class thread of 8 bytes with the one member _M_id", ps)
	}
}
