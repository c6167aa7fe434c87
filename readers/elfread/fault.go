package elfread

import (
	"errors"
	"runtime"
	"runtime/debug"
	"sync"
	"unsafe"
)

// Open maps files rather than reading them: the reader is lazy (doc.go), and
// on a 100 MB object a struct in the first unit costs 0.00 s and 10 MB of RSS
// mapped against 0.06-0.13 s and 116 MB read into memory. The price of a
// mapping is that a file truncated by another process while it is read
// raises SIGBUS on the next page touched past its new end, which Go turns
// into "fatal error: fault" and a stack dump unless the goroutine asked for
// a panic instead (runtime/debug.SetPanicOnFault, which is per goroutine).
// The reader starts no goroutine of its own but ScanAll's workers, which
// guard themselves; otherwise the goroutine that calls it is the only one
// that touches a mapping: Guard (or a caller that sets
// SetPanicOnFault and asks FaultError, as the CLI's command runner does)
// turns the fault into an *InputError naming the file.

// mapped is every live mapping Open made, by its first byte's address, so
// that a fault address names its file; retired is the last mappings Close
// unmapped. A fault unwinds through the deferred Close of the very File it
// hit (open, defer Close, read: the usual shape) before any recover runs,
// so the recover must still find the file it was in, or the fault reads as
// an unnamed "invalid memory address or nil pointer dereference".
var mapped struct {
	sync.Mutex
	m       map[uintptr]mapping
	retired [16]retiredMapping
	next    int
}

type mapping struct {
	size uintptr
	path string
}

type retiredMapping struct {
	base uintptr
	mapping
}

func registerMapping(data []byte, path string) {
	mapped.Lock()
	defer mapped.Unlock()
	if mapped.m == nil {
		mapped.m = map[uintptr]mapping{}
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	mapped.m[base] = mapping{uintptr(len(data)), path}
	// The range is live again: no retired entry may claim it.
	for i, r := range mapped.retired {
		if r.size > 0 && base < r.base+r.size && r.base < base+uintptr(len(data)) {
			mapped.retired[i] = retiredMapping{}
		}
	}
}

func unregisterMapping(data []byte) {
	mapped.Lock()
	defer mapped.Unlock()
	base := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	if m, ok := mapped.m[base]; ok {
		mapped.retired[mapped.next] = retiredMapping{base, m}
		mapped.next = (mapped.next + 1) % len(mapped.retired)
	}
	delete(mapped.m, base)
}

// mappedFile names the file whose live mapping holds addr, else the last
// unmapped one that held it, and the offset of addr in it.
func mappedFile(addr uintptr) (path string, off uintptr, ok bool) {
	mapped.Lock()
	defer mapped.Unlock()
	for base, m := range mapped.m {
		if addr >= base && addr-base < m.size {
			return m.path, addr - base, true
		}
	}
	for i := range len(mapped.retired) {
		r := mapped.retired[(mapped.next-1-i+2*len(mapped.retired))%len(mapped.retired)]
		if r.size > 0 && addr >= r.base && addr-r.base < r.size {
			return r.path, addr - r.base, true
		}
	}
	return "", 0, false
}

// FaultError turns what recover returned after a memory fault inside a file
// Open mapped (with SetPanicOnFault on in that goroutine) into an
// *InputError naming the file; for anything else, nil: the caller re-panics
// or reports it as its own bug.
func FaultError(r any) error {
	re, ok := r.(runtime.Error)
	if !ok {
		return nil
	}
	var fa interface{ Addr() uintptr }
	if !errors.As(re, &fa) {
		return nil
	}
	path, off, ok := mappedFile(fa.Addr())
	if !ok {
		return nil
	}
	return InputErrorf(path, "changed while it was being read (byte %d is gone: the file was truncated during the run); read it again once nothing is writing it", off)
}

// Guard runs fn with memory faults turned into panics in this goroutine,
// and returns a fault inside a mapped input as the *InputError FaultError
// makes of it. Any other panic goes on. Whatever reads a File (its embedded
// debug/elf methods included) in another goroutine needs its own Guard.
func Guard(fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		if r := recover(); r != nil {
			if ferr := FaultError(r); ferr != nil {
				err = ferr
				return
			}
			panic(r)
		}
	}()
	return fn()
}
