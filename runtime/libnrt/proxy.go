package main

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/nrtabi/nrtabi/runtime/nrt"
)

// maxProxyRun bounds nrtabi_proxy_run: the export is a probe of the loop,
// not a way to park a host.
const maxProxyRun = 60 * time.Second

// nrtabi_proxy_run runs the proxy-<tid> driver loop (nrt.RunProxy,
// docs/sources.md#s000-3) over the loaded libnccom for stream 0, proxy 0 of
// a NULL comm, for at most ms milliseconds (capped at a minute), or until a
// tick fails. It writes "thread=proxy-<tid> ticks=N progressed=N status=S"
// to line (S is the status that ended the loop, NRT_SUCCESS when the time
// ran out) and returns that status.
//
//export nrtabi_proxy_run
func nrtabi_proxy_run(ms C.uint32_t, line *C.char, n C.size_t) C.uint32_t {
	d := min(time.Duration(ms)*time.Millisecond, maxProxyRun)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	p, err := nrt.RunProxy(ctx, nil, 0, 0, nrt.ProxyOptions{})
	if err != nil {
		putString(line, n, "status="+nrt.StatusOf(err).String())
		slog.Error("proxy driver did not start", "err", err)
		return C.uint32_t(nrt.StatusOf(err))
	}
	<-p.Done()
	err = p.Stop()
	s := p.Stats()
	putString(line, n, fmt.Sprintf("thread=%s ticks=%d progressed=%d status=%s", p.Thread(), s.Ticks, s.Progressed, nrt.StatusOf(err)))
	return C.uint32_t(nrt.StatusOf(err))
}
