package layoutcheck

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestForEachFirstErrorInOrder: the error is the lowest failing index's,
// however the workers finish (a later input failing first must not win),
// and no index after a failure is started once it is known.
func TestForEachFirstErrorInOrder(t *testing.T) {
	for _, jobs := range []int{1, 2, 8} {
		var started atomic.Int64
		err := forEach(40, jobs, func(i int) error {
			started.Add(1)
			switch i {
			case 2:
				time.Sleep(30 * time.Millisecond) // fails last
				return fmt.Errorf("input %d", i)
			case 3, 4:
				return fmt.Errorf("input %d", i)
			}
			return nil
		})
		if err == nil || err.Error() != "input 2" {
			t.Errorf("-j %d: error %v, want input 2's", jobs, err)
		}
		if n := started.Load(); n > 4+int64(jobs)+1 {
			t.Errorf("-j %d: %d inputs started after input 3 failed", jobs, n)
		}
	}
}

// TestForEachPanicOnCaller: a bug's panic in a worker reaches the caller's
// goroutine, where the command's recover reports it, instead of killing
// the process from a goroutine nothing recovers.
func TestForEachPanicOnCaller(t *testing.T) {
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), "planted bug") {
			t.Fatalf("recovered %v, want the worker's panic", r)
		}
	}()
	_ = forEach(4, 2, func(i int) error {
		if i == 1 {
			panic(errors.New("planted bug"))
		}
		return nil
	})
	t.Fatal("forEach returned after a worker panicked")
}
