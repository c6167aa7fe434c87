package e2e

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/proc"
	"github.com/nrtabi/nrtabi/runtime/builder"
)

// cDriver is a small C program (runtime/e2e/testdata/common/NAME.c) linked
// with some of the reference libnccom's sources, run as one long-lived child
// that answers records on its stdin, so a fuzz target reaches C code at pipe
// speed. It is built once per test process, with ASan/UBSan when the
// compiler has them; its input closing ends it.
type cDriver struct {
	name     string   // the program, without .c
	libnccom []string // the libnccom sources it links
	env      []string // added to the environment
	stderr   io.Writer

	once sync.Once
	err  error
	mu   sync.Mutex
	in   io.Writer
	out  *bufio.Reader
}

func (d *cDriver) start(t testing.TB) {
	d.once.Do(func() { d.err = d.launch(t) })
	if d.err != nil {
		t.Fatal(d.err)
	}
}

func (d *cDriver) launch(t testing.TB) error {
	tr, err := builder.Open(abi.Release)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "nrtabi-"+d.name+"-")
	if err != nil {
		return err
	}
	bin := filepath.Join(dir, d.name)
	srcs := []string{filepath.Join(tr.Root, "runtime", "e2e", "testdata", "common", d.name+".c")}
	for _, s := range d.libnccom {
		srcs = append(srcs, filepath.Join(tr.LibnccomSourceDir(), s))
	}
	flags := []string{"-I" + tr.LibnccomSourceDir()}
	if _, err := builder.SanitizerRuntime(t.Context()); err == nil {
		flags = append(flags, "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined")
	}
	if err := tr.BuildProgram(t.Context(), bin, srcs, flags...); err != nil {
		return err
	}
	// It lives as long as the test process, not the test that started it.
	cmd := proc.Command(context.Background(), bin)
	cmd.Env = append(append(os.Environ(), "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1"), d.env...)
	cmd.Stderr = d.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	d.in, d.out = in, bufio.NewReader(out)
	go func() { _ = cmd.Wait(); os.RemoveAll(dir) }()
	return nil
}

// call sends one record and reads its answer with read, one caller at a
// time; a driver that dies (a sanitizer report is on its stderr) fails t.
func (d *cDriver) call(t testing.TB, rec []byte, read func(*bufio.Reader) error) {
	d.start(t)
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, err := d.in.Write(rec); err != nil {
		t.Fatalf("%s: %v", d.name, err)
	}
	if err := read(d.out); err != nil {
		t.Fatalf("%s died (a sanitizer report is on its stderr): %v", d.name, err)
	}
}
