package nrt

/*
#include "nrt_slots.h"
*/
import "C"

import (
	"context"
	"log/slog"
	"sync/atomic"
)

var logger atomic.Pointer[slog.Logger]

// SetLogger sends the runtime's log lines (the handoff's, the trampolines'
// and the reverse callbacks') to l; nil restores slog.Default().
func SetLogger(l *slog.Logger) { logger.Store(l) }

func runtimeLog() *slog.Logger {
	if l := logger.Load(); l != nil {
		return l
	}
	return slog.Default()
}

// nrtLog receives the C side's lines. The shipped runtime logs them under
// the "ENC" subsystem with the function's name.
//
//export nrtLog
func nrtLog(level C.int, fn, msg *C.char) {
	lvl := slog.LevelDebug
	switch {
	case level <= C.NRT_NCCL_LOG_ERROR:
		lvl = slog.LevelError
	case level <= C.NRT_NCCL_LOG_INFO:
		lvl = slog.LevelInfo
	}
	runtimeLog().Log(context.Background(), lvl, C.GoString(msg), "subsys", "ENC", "fn", C.GoString(fn))
}
