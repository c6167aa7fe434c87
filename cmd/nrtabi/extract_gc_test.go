package main

import (
	"runtime"
	"testing"
	"time"
)

// TestAfterFirstGC: extract --all's switch from no collection to GOGC=400
// runs once a collection happened, and only once.
func TestAfterFirstGC(t *testing.T) {
	ran := make(chan struct{}, 2)
	afterFirstGC(func() { ran <- struct{}{} })
	deadline := time.After(10 * time.Second)
	for done := false; !done; {
		runtime.GC()
		select {
		case <-ran:
			done = true
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatal("afterFirstGC's function did not run within 10 s of collections")
		}
	}
	runtime.GC()
	runtime.GC()
	time.Sleep(20 * time.Millisecond)
	if len(ran) != 0 {
		t.Fatal("afterFirstGC's function ran twice")
	}
}
