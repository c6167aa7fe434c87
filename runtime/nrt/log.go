package nrt

/*
#include "nrt_slots.h"
*/
import "C"

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/nrtabi/nrtabi/internal/cfmt"
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

// EnvLogLevel chooses how much libnrt and nrtabi-runtime's ranks log to
// stderr: debug, info (the default), warn or error.
const EnvLogLevel = "NRTABI_LOG_LEVEL"

// LogLevelFromEnv reads EnvLogLevel through getenv: info when unset, an
// error naming the variable for a value it does not know.
func LogLevelFromEnv(getenv func(string) string) (slog.Level, error) {
	switch v := getenv(EnvLogLevel); strings.ToLower(v) {
	case "", "info":
		return slog.LevelInfo, nil
	case "debug":
		return slog.LevelDebug, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	default:
		return slog.LevelInfo, fmt.Errorf("%s=%s: use debug, info, warn or error", EnvLogLevel, cfmt.Escape(v, 32))
	}
}
