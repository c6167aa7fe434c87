package main

import "os"

// writebackEvery is how many bytes of an output go by between two starts
// of the kernel's writeback (startWriteback).
const writebackEvery = 8 << 20

// writeback is the temporary file of writeAtomicFunc as its writer: every
// writebackEvery bytes it asks the kernel to start writing what came
// since, without waiting, so that the fsync before the rename waits for the
// last stretch and not for the whole file. A fragment of a large object is
// hundreds of MB (786 MB for the synthetic one, whose fsync took 0.28 s
// of a 2.5 s extract --all: docs/benchmarks.md#fewer-waits-and-less-garbage-2026-12-07).
// The start is a hint: where the system has none, or refuses it, the
// fsync does all of the work, as before.
type writeback struct {
	f             *os.File
	done, started int64
	// start is startWriteback (a test's record in its place).
	start func(f *os.File, off, n int64)
}

func newWriteback(f *os.File) *writeback { return &writeback{f: f, start: startWriteback} }

func (w *writeback) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.done += int64(n)
	if w.done-w.started >= writebackEvery {
		w.start(w.f, w.started, w.done-w.started)
		w.started = w.done
	}
	return n, err
}
