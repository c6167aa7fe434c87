package nrt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// waitFor polls cond until it holds or the total deadline d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", d, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// The "proxy-<tid>" loop (docs/sources.md#s000-3): a thread of its own named
// after its tid ticks ncclNetworkProxyProgress once per iteration through
// the loaded libnccom (the generated forward-only double: its tick reports
// progress), sees the completion nec_inc_semaphore stores into its word, and
// ends with Stop, taking its thread with it.
func TestProxyDriverTicksOnItsThread(t *testing.T) {
	initGood(t)
	d, err := RunProxy(context.Background(), nil, 1, 2, ProxyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tid, err := strconv.Atoi(strings.TrimPrefix(d.Thread(), "proxy-"))
	if err != nil || !strings.HasPrefix(d.Thread(), "proxy-") {
		t.Fatalf("thread %q is not proxy-<tid>", d.Thread())
	}
	comm := fmt.Sprintf("/proc/self/task/%d/comm", tid)
	name, err := os.ReadFile(comm)
	if err != nil || strings.TrimSpace(string(name)) != d.Thread() {
		t.Errorf("%s = %q (%v), want %s", comm, name, err, d.Thread())
	}
	waitFor(t, 10*time.Second, "fewer than 100 ticks", func() bool { return d.Stats().Ticks >= 100 })
	if s := d.Stats(); s.Progressed == 0 || s.Edges != 0 {
		t.Errorf("before any completion: %+v; want progress and no edge", s)
	}
	incSemaphore(d.Semaphore(), 0x10001) // what libnccom does on a completion
	waitFor(t, 10*time.Second, "the nec_inc_semaphore edge was not seen", func() bool { return d.Stats().Edges == 1 })
	if s := d.Stats(); s.Semaphore != 0x10001 {
		t.Errorf("semaphore %#x, want 0x10001", s.Semaphore)
	}
	if err := d.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	n := d.Stats().Ticks
	time.Sleep(20 * time.Millisecond)
	if m := d.Stats().Ticks; m != n {
		t.Errorf("%d ticks after Stop", m-n)
	}
	// The locked thread ends with the loop instead of going back to the pool.
	waitFor(t, 10*time.Second, "the driver's thread outlived it", func() bool {
		_, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid))
		return errors.Is(err, os.ErrNotExist)
	})
	if err := d.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// The driver's context is the comm's: cancelling it ends the loop with no
// error, within the idle pause.
func TestProxyDriverContext(t *testing.T) {
	initGood(t)
	ctx, cancel := context.WithCancel(context.Background())
	d, err := RunProxy(ctx, nil, 0, 0, ProxyOptions{Idle: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "no tick", func() bool { return d.Stats().Ticks > 0 })
	cancel()
	select {
	case <-d.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the loop outlived its context")
	}
	if err := d.Err(); err != nil {
		t.Errorf("Err after cancel: %v", err)
	}
	if err := d.Stop(); err != nil {
		t.Errorf("Stop after cancel: %v", err)
	}
}

// StartProxy starts the proxy in libnccom, then the loop; Stop ends both.
func TestStartProxy(t *testing.T) {
	initGood(t)
	d, err := StartProxy(context.Background(), nil, 3, 4, nil, 0, nil, 0, nil, 0, ProxyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "no tick", func() bool { return d.Stats().Ticks > 0 })
	if err := d.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if !strings.Contains(logs.String(), "thread="+d.Thread()) {
		t.Errorf("no log line names %s", d.Thread())
	}
}
