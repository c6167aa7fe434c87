package nrt

/*
#include <stdlib.h>
#include "nrtabi.h"
#include "proxy_driver.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// DefaultProxyIdle is how long the proxy loop pauses after a tick that made
// no progress. The seed gives the loop's shape, not its cadence
// (extension proxy-driver-cadence): a loop that never pauses would hold a
// core for a proxy with nothing to do.
const DefaultProxyIdle = 50 * time.Microsecond

// ErrProxyFailed is a tick that reported failed = true.
var ErrProxyFailed = errors.New("the proxy tick reported failure")

// ProxyOptions tune a proxy driver.
type ProxyOptions struct {
	// Idle is the pause after a tick without progress; 0 is DefaultProxyIdle.
	Idle time.Duration
}

// ProxyStats is what a proxy driver has done so far.
type ProxyStats struct {
	Ticks      uint64 // ncclNetworkProxyProgress calls
	Progressed uint64 // ticks that reported progress
	Edges      uint64 // changes of the semaphore word seen
	Semaphore  uint32 // the word's last value seen
}

// ProxyDriver is libnrt's "proxy-<tid>" driver loop (docs/sources.md#s000-3):
// one OS thread, named proxy-<its tid>, calls the hot, guard-exempt
// ncclNetworkProxyProgress once per iteration and consumes the completion
// edge libnccom raises through nec_inc_semaphore on the driver's semaphore
// word (docs/sources.md#s000-4, the inline shape: *sem = val). The loop is C
// (proxy_driver.c) on a pthread of its own; it runs until its context ends,
// Stop is called or a tick fails.
type ProxyDriver struct {
	d         *C.struct_nrt_proxy_driver // C memory: libnccom stores into d.sem from any thread
	comm      Comm
	stream    uint32
	thread    string
	done      chan struct{}
	stopProxy bool // Stop also calls ncclStopNetworkProxy (StartProxy)
	err       error
	stopOnce  sync.Once
	stopErr   error

	mu    sync.Mutex // holds off the free while Stats reads the C counters
	freed bool
	final ProxyStats // the counters when Stop freed them
}

// RunProxy starts the driver loop for stream streamID / proxy proxyID of
// comm and returns once its thread is named. The forward table must be
// loaded (ErrUninitialized otherwise: the tick's trampoline has no guard,
// docs/sources.md#s000-3-quirk). The loop ends when ctx does.
func RunProxy(ctx context.Context, comm Comm, streamID, proxyID uint32, opts ProxyOptions) (*ProxyDriver, error) {
	if !ready.Load() {
		return nil, fmt.Errorf("proxy driver: %w", ErrUninitialized)
	}
	idle := opts.Idle
	if idle <= 0 {
		idle = DefaultProxyIdle
	}
	d := (*C.struct_nrt_proxy_driver)(C.calloc(1, C.sizeof_struct_nrt_proxy_driver))
	if d == nil {
		return nil, errors.New("proxy driver: no memory for the driver")
	}
	d.comm, d.stream, d.proxy, d.idle_ns = unsafe.Pointer(comm), C.uint32_t(streamID), C.uint32_t(proxyID), C.uint64_t(idle.Nanoseconds())
	if rc := C.nrt_proxy_start(d); rc != 0 {
		C.free(unsafe.Pointer(d))
		return nil, fmt.Errorf("proxy driver: starting its thread: %w", syscall.Errno(rc))
	}
	p := &ProxyDriver{d: d, comm: comm, stream: streamID, thread: "proxy-" + strconv.FormatInt(int64(d.tid), 10), done: make(chan struct{})}
	runtimeLog().Info("proxy driver started", "subsys", "ENC", "thread", p.thread, "stream_id", streamID, "proxy_id", proxyID)
	go func() {
		C.nrt_proxy_join(d)
		if atomic.LoadInt32((*int32)(unsafe.Pointer(&d.ended))) != 0 {
			var err error = Status(uint32(d.rc))
			if d.rc == C.uint32_t(statusSuccess) {
				err = ErrProxyFailed
			}
			p.err = fmt.Errorf("%s: stream %d proxy %d: tick %d: %w", p.thread, streamID, proxyID, p.counters().Ticks, err)
			runtimeLog().Error("proxy driver stopped", "subsys", "ENC", "thread", p.thread, "err", p.err)
		} else {
			runtimeLog().Info("proxy driver stopped", "subsys", "ENC", "thread", p.thread, "ticks", p.counters().Ticks)
		}
		close(p.done)
	}()
	go func() {
		select {
		case <-ctx.Done():
			atomic.StoreInt32((*int32)(unsafe.Pointer(&d.stop)), 1)
		case <-p.done:
		}
	}()
	return p, nil
}

// StartProxy is ncclStartNetworkProxy followed by RunProxy: the driver lives
// as long as the proxy it drives, and its Stop also calls
// ncclStopNetworkProxy. A failed start runs no loop.
func StartProxy(ctx context.Context, comm Comm, streamID, proxyID uint32, ops unsafe.Pointer, nOps int, src unsafe.Pointer, nSrc int, dst unsafe.Pointer, nDst int, opts ProxyOptions) (*ProxyDriver, error) {
	if err := StartNetworkProxy(comm, streamID, proxyID, ops, nOps, src, nSrc, dst, nDst); err != nil {
		return nil, err
	}
	p, err := RunProxy(ctx, comm, streamID, proxyID, opts)
	if err != nil {
		return nil, errors.Join(err, StopNetworkProxy(comm, streamID))
	}
	p.stopProxy = true
	return p, nil
}

// Thread is the driver thread's name, "proxy-<tid>".
func (p *ProxyDriver) Thread() string { return p.thread }

// Semaphore is the word to hand libnccom for nec_inc_semaphore: C memory,
// valid until Stop returns.
func (p *ProxyDriver) Semaphore() unsafe.Pointer { return unsafe.Pointer(&p.d.sem) }

// Done is closed when the loop has ended.
func (p *ProxyDriver) Done() <-chan struct{} { return p.done }

// Stats is what the driver has done so far.
func (p *ProxyDriver) Stats() ProxyStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.freed {
		return p.final
	}
	return p.counters()
}

func (p *ProxyDriver) counters() ProxyStats {
	d := p.d
	return ProxyStats{
		Ticks:      atomic.LoadUint64((*uint64)(unsafe.Pointer(&d.ticks))),
		Progressed: atomic.LoadUint64((*uint64)(unsafe.Pointer(&d.progressed))),
		Edges:      atomic.LoadUint64((*uint64)(unsafe.Pointer(&d.edges))),
		Semaphore:  atomic.LoadUint32((*uint32)(unsafe.Pointer(&d.last_sem))),
	}
}

// Err is the failed tick that ended the loop; nil while it runs or when its
// context or Stop ended it.
func (p *ProxyDriver) Err() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

// Stop ends the loop, waits for its thread and, for a driver StartProxy
// made, stops the proxy in libnccom; then it frees the driver's memory
// (the semaphore word with it). It returns the failed tick that ended the
// loop, if one did, and the stop's error; a second call returns the same.
func (p *ProxyDriver) Stop() error {
	p.stopOnce.Do(func() {
		atomic.StoreInt32((*int32)(unsafe.Pointer(&p.d.stop)), 1)
		<-p.done
		if p.stopProxy {
			p.stopErr = StopNetworkProxy(p.comm, p.stream)
		}
		p.mu.Lock()
		p.final, p.freed = p.counters(), true
		C.free(unsafe.Pointer(p.d))
		p.mu.Unlock()
	})
	return errors.Join(p.err, p.stopErr)
}

// incSemaphore is nec_inc_semaphore, called from Go: what libnccom does to
// signal a completion.
func incSemaphore(sem unsafe.Pointer, val uint32) {
	C.nec_inc_semaphore((*C.uint32_t)(sem), C.uint32_t(val))
}
