package layoutcheck

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/hostile"
	"github.com/nrtabi/nrtabi/layoutcheck/elfread"
)

// hostileHeaderWait is how long a crafted header tree may take before the
// test calls it hung: well over the compile's own limit.
const hostileHeaderWait = 20 * time.Second

// TestHeadersHostile: every crafted header tree ends within its limits with
// one line naming the header and the limit it hit, or compiles.
func TestHeadersHostile(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	for _, c := range hostile.HeaderCases() {
		t.Run(c.Name, func(t *testing.T) {
			dir, err := c.Build(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			type result struct {
				h   *Headers
				err error
			}
			done := make(chan result, 1)
			start := time.Now()
			// A smaller memory limit than the default, so that the
			// exponential cases end quickly on a loaded machine.
			opts := HeaderOptions{Memory: 256 << 20}
			if c.Slow {
				opts.Timeout = 3 * time.Second
			}
			go func() {
				h, err := CompileHeadersContext(t.Context(), dir, opts)
				done <- result{h, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(hostileHeaderWait):
				t.Fatalf("still compiling after %v", hostileHeaderWait)
			}
			took := time.Since(start)
			if c.Want == "" {
				if r.err != nil {
					t.Fatalf("%v", r.err)
				}
				r.h.Close()
				return
			}
			if r.err == nil {
				r.h.Close()
				t.Fatalf("compiled, want an error with %q", c.Want)
			}
			msg := r.err.Error()
			var ie *elfread.InputError
			if !errors.As(r.err, &ie) {
				t.Errorf("%T, want *InputError: %.300q", r.err, msg)
			}
			if !(strings.Contains(msg, c.Want) || c.Alt != "" && strings.Contains(msg, c.Alt)) || strings.ContainsAny(msg, "\n\r\x1b\x07") || len(msg) > 2000 {
				t.Errorf("error %.600q: want one line of under 2000 bytes, escaped, with %q", msg, c.Want)
			}
			t.Logf("%s: %s", took.Round(time.Millisecond), msg)
		})
	}
}
