// Command libnrt is nrtabi's libnrt.so.1, built with
// go build -buildmode=c-shared and linked with the spec's version script
// (see runtime/builder and `make libnrt`). It exports the 20 reverse
// callbacks @@NRT_2.0.0 (runtime/nrt's reverse.c) and the entry points in
// nrtabi_runtime.h; a libnccom it dlopens binds back into it at load time.
//
// Logging goes to stderr through log/slog; NRTABI_LOG_LEVEL (debug, info,
// warn, error) sets the level, info by default.
package main

/*
#include <stddef.h>
#include <stdint.h>
typedef const char nrtabi_cchar;
*/
import "C"

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"unsafe"

	"github.com/nrtabi/nrtabi/runtime/nrt"
)

func main() {}

func init() {
	level, err := nrt.LogLevelFromEnv(os.Getenv)
	l := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(l)
	nrt.SetLogger(l)
	if err != nil {
		// A library's constructor cannot fail its host: say so, at info.
		l.Warn("libnrt logs at info", "err", err)
	}
}

var (
	initOnce   sync.Once
	initStatus nrt.Status
)

func goString(s *C.nrtabi_cchar) string {
	if s == nil {
		return ""
	}
	return C.GoString((*C.char)(unsafe.Pointer(s)))
}

// MaxOutBuffer is the largest buffer size an nrtabi_* export accepts: a
// larger n is no buffer a caller has, it is a bug (SIZE_MAX, a negative
// length cast), and the call is refused instead of trusted.
const MaxOutBuffer = 1 << 30

// putString copies s into the C buffer out of n bytes, NUL-terminated,
// touching only the bytes it writes. It is false when n is absurd.
func putString(out *C.char, n C.size_t, s string) bool {
	if n > MaxOutBuffer {
		return false
	}
	if out == nil || n == 0 {
		return true
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(out)), min(int(n), len(s)+1))
	k := copy(b[:len(b)-1], s)
	b[k] = 0
	return true
}

//export nrtabi_init
func nrtabi_init(topology, libnccom *C.nrtabi_cchar) C.uint32_t {
	topo, lib := goString(topology), goString(libnccom)
	initOnce.Do(func() { initStatus = initRuntime(topo, lib) })
	return C.uint32_t(initStatus)
}

func initRuntime(topology, library string) nrt.Status {
	if topology != "" {
		t, err := nrt.LoadTopology(topology)
		if err != nil {
			slog.Error("nrtabi_init: the topology does not load", "err", err)
			return nrt.ErrInvalid
		}
		nrt.SetDevice(t)
	}
	_, err := nrt.Init(nrt.Options{Library: library})
	return nrt.StatusOf(err)
}

//export nrtabi_ccom_state
func nrtabi_ccom_state(slots, armed *C.int, msg *C.char, n C.size_t) C.int {
	if n > MaxOutBuffer {
		slog.Error("nrtabi_ccom_state: refused", "n", uint64(n), "max", MaxOutBuffer)
		return -1
	}
	s := nrt.CurrentState()
	if slots != nil {
		*slots = nrt.NumSlots
	}
	if armed != nil {
		*armed = 0
		if s.Armed {
			*armed = 1
		}
	}
	putString(msg, n, s.Message)
	return C.int(s.ValidSlots)
}

//export nrtabi_ccom_call
func nrtabi_ccom_call(index C.int, out *C.char, n C.size_t) C.uint32_t {
	if n > MaxOutBuffer {
		slog.Error("nrtabi_ccom_call: refused", "n", uint64(n), "max", MaxOutBuffer)
		return C.uint32_t(nrt.ErrInvalid)
	}
	i := int(index)
	if i < 0 || i >= len(nrt.Forward) {
		putString(out, n, fmt.Sprintf("no forward entry point %d (0..%d)", i, len(nrt.Forward)-1))
		return C.uint32_t(nrt.ErrInvalid)
	}
	desc, err := nrt.Exercise(i)
	line := nrt.Forward[i].Name + ": "
	switch {
	case err != nil:
		line += nrt.StatusOf(err).String()
		var st nrt.Status
		if !errors.As(err, &st) {
			line += " (" + err.Error() + ")" // not a status from libnccom: say why
		}
	case desc != "":
		line += "ok " + desc
	default:
		line += "ok"
	}
	putString(out, n, line)
	return C.uint32_t(nrt.StatusOf(err))
}
