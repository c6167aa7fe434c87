package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"

	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/internal/esc"
	"github.com/nrtabi/nrtabi/internal/regfile"
	"github.com/nrtabi/nrtabi/layoutcheck"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/spec"
)

func extractCommand() *cli.Command {
	return &cli.Command{Name: "extract", Summary: "write spec TOML (a struct fragment) for structs read from a binary's DWARF",
		Synopsis: "[--struct NAME]... | --all [-j N] [--spec NAME|DIR] [-o FILE.toml] FILE | --headers DIR [--include FILE]...",
		Example:  "extract --struct nec_version_info_t -o fragment.toml build/libnrt.so.1",
		Run:      extractCmd}
}

func extractCmd(ctx context.Context, c *cli.Command, args []string, out, errw io.Writer) error {
	fs := c.Flags(out, errw)
	var sf cli.SpecFlag
	sf.Register(fs, "spec", spec.Default, "the release whose struct names to use (and whose structs are extracted by default)")
	outPath := fs.String("o", "", "write the fragment to this file (atomically) instead of stdout")
	headers := fs.String("headers", "", "read the structs from the C headers under this directory (compiled with gcc -g in a temporary directory) instead of a FILE")
	var names, include cli.ListFlag
	fs.Var(&include, "include", "with --headers: a header to read, relative to DIR (repeatable, or a comma list); default every *.h")
	fs.Var(&names, "struct", "struct to extract (repeatable, or a comma list); default: every spec struct the file has")
	all := fs.Bool("all", false, "extract every named struct, union and enum of the file, not the spec's structs")
	jobs := fs.Int("j", elfread.DefaultJobs(), "with --all: scan the file's compilation units on N workers (the fragment is the same for every N)")
	var dirs debugDirFlag
	dirs.register(fs)
	pos, err := c.ParseAnywhere(fs, args)
	if err != nil {
		return err
	}
	if *jobs < 1 {
		return c.Usagef("-j %d: the number of workers is at least 1", *jobs)
	}
	if *all && len(names) > 0 {
		return c.Usagef("--all extracts every struct; give it or --struct, not both")
	}
	if *headers == "" && len(pos) != 1 {
		if err := extractArgOrder(c, pos); err != nil {
			return err
		}
	}
	if len(pos) != 1 && *headers == "" || len(pos) != 0 && *headers != "" {
		return c.Usagef("name exactly one FILE, or --headers DIR")
	}
	if len(include) > 0 && *headers == "" {
		return c.Usagef("--include names a header under --headers DIR; give --headers too")
	}
	sp, where, err := sf.Load()
	if err != nil {
		return specError(c, where, err)
	}
	if *headers == "" && missing(pos[0]) && specStruct(sp, pos[0]) {
		return c.Usagef("%q is a struct of the spec, not a file; a struct is named with --struct: nrtabi extract --struct %s FILE", pos[0], pos[0])
	}
	specStructs := len(names) == 0 && !*all
	if specStructs {
		for _, st := range sp.Structs {
			names = append(names, st.Name)
		}
	}
	if *headers != "" {
		h, err := layoutcheck.CompileHeadersContext(ctx, *headers, layoutcheck.HeaderOptions{Include: include, Spec: sp})
		if err != nil {
			return layoutError(err)
		}
		defer h.Close()
		for _, n := range h.Notes {
			fmt.Fprintf(errw, "%s: note: %s\n", c.FullName(), esc.String(n))
		}
		for _, w := range h.Warnings {
			fmt.Fprintf(errw, "%s: warning: %s\n", c.FullName(), esc.String(w))
		}
		pos = []string{h.Object}
	}
	opt := release.ExtractOptions{Names: names, SkipAbsent: specStructs, Spec: sp, DebugDirs: dirs.get(), Fetch: cli.Debuginfod()}
	if *all {
		opt = release.ExtractOptions{Spec: sp, DebugDirs: dirs.get(), Fetch: cli.Debuginfod(), All: true, Jobs: *jobs}
	}
	// A package FILE (PKG[,DEBUGPKG...] or PKG!/member) is read in memory
	// (docs/packages.md).
	file, err := extractArg(pos[0], &opt)
	if err != nil {
		return layoutError(err)
	}
	if *all {
		return extractAllCmd(ctx, c, file, *outPath, out, errw, opt)
	}
	var buf bytes.Buffer
	// Structs without a spec layout (declarations, empty GNU C structs) are
	// refused one by one: the fragment of the others is still written, the
	// refusal goes to stderr and the exit status says not everything was.
	var done error
	var refused *release.RefusedError
	if err := release.ExtractContext(ctx, file, &buf, opt); errors.As(err, &refused) {
		done = err
	} else if err != nil {
		return layoutError(err)
	}
	if *outPath == "" {
		if _, err := out.Write(buf.Bytes()); err != nil {
			return err
		}
		return done
	}
	if err := writeAtomic(*outPath, buf.Bytes()); err != nil {
		return err
	}
	return done
}

// extractMemoryLimit is extract --all's soft memory limit (see
// extractAllCmd).
const extractMemoryLimit = 1536 << 20

// extractGCFree is the heap extract --all grows to before its first
// collection (see extractAllCmd).
const extractGCFree = 256 << 20

// afterFirstGC runs f once, on the finalizer goroutine, after the first
// collection from now: that collection finds the sentinel unreachable.
// The sentinel has a pointer, so it is never one of the tiny allocator's
// blocks, whose finalizers wait for the whole block.
func afterFirstGC(f func()) {
	type sentinel [4]*byte
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) { f() })
}

// extractAllCmd is extract --all: the fragment is streamed (it can be
// several times the input's size) to the temporary file that replaces -o
// once complete, or to stdout; what was passed over is one counted line
// per kind on stderr (docs/nrtabi-extract.md#every-type---all).
func extractAllCmd(ctx context.Context, c *cli.Command, path, outPath string, out, errw io.Writer, opt release.ExtractOptions) error {
	var stats release.ExtractStats
	opt.Stats = &stats
	if os.Getenv("GOGC") == "" {
		// The rows are built and written at a high allocation rate over a
		// smaller live heap (the type graph): GOGC=400 collects a fifth as
		// often (docs/nrtabi-extract.md#every-type---all).
		if os.Getenv("GOMEMLIMIT") == "" {
			// No collection at all until the heap first reaches
			// extractGCFree: a library the size of libc's debug file
			// never gets there, and its collections were a tenth of its
			// wall time (docs/benchmarks.md#gc-free-below-256-mib). After
			// the first one, GOGC=400 under a soft 1.5 GiB: five times
			// the graph of a member-dense object (the synthetic one's is
			// 670 MB) would be a 3.5 GB peak, and past the limit the
			// collector runs as often as it must.
			debug.SetGCPercent(-1)
			debug.SetMemoryLimit(extractGCFree)
			afterFirstGC(func() {
				debug.SetGCPercent(400)
				debug.SetMemoryLimit(extractMemoryLimit)
			})
		} else {
			debug.SetGCPercent(400)
		}
	}
	var size countingWriter
	run := func(w io.Writer) error {
		size.w = w
		return release.ExtractContext(ctx, path, &size, opt)
	}
	var err error
	if outPath == "" {
		err = run(out)
	} else {
		err = writeAtomicFunc(outPath, run)
	}
	if err != nil {
		return layoutError(err)
	}
	for _, s := range stats.Skipped {
		fmt.Fprintf(errw, "%s: %s: skipped %s\n", c.FullName(), esc.String(path), esc.String(s))
	}
	if size.n > maxFragmentBytes {
		// The fragment is whole and kept, but no spec load reads a file
		// this large (a hostile spec's bound): the round trip does not
		// hold, and the exit status says so
		// (docs/nrtabi-extract.md#never-a-file-the-loader-refuses).
		return fmt.Errorf("%s: the fragment is %d bytes, more than the %d one spec file may hold (spec.MaxSpecFileSize): check and diff cannot load it; extract the structs you need by name (nrtabi extract NAME... FILE)", esc.String(path), size.n, maxFragmentBytes)
	}
	return nil
}

// maxFragmentBytes is the largest fragment check can load as one file; a
// variable for TestExtractAllTooLarge.
var maxFragmentBytes int64 = spec.MaxSpecFileSize

// countingWriter counts what passes through it to w.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// writeAtomic replaces path only once the whole content is on disk. The
// directories it needs are made, and removed again when the write fails,
// so nothing partial is left; every error names the user's path, never
// the temporary file's (docs/nrtabi-extract.md#options).
func writeAtomic(path string, data []byte) error {
	return writeAtomicFunc(path, func(w io.Writer) error {
		if _, err := w.Write(data); err != nil {
			return fmt.Errorf("-o %s: writing it: %w", path, bareError(err))
		}
		return nil
	})
}

// writeAtomicFunc is writeAtomic of what write writes; an error of write
// is returned as it is (it names its own subject), and nothing is left.
// Only a regular file (or nothing) is replaced: a device node, a FIFO, a
// socket, a symbolic link or a directory at path is refused by name before
// anything is written, and again just before the rename, so -o /dev/null
// never turns the system's node into a file. The temporary file is made
// in path's directory (a rename within one file system), with the mode of
// the file it replaces (or 0666 less the umask for a new one), and is on
// disk before it takes path's name (docs/nrtabi-extract.md#options).
func writeAtomicFunc(path string, write func(io.Writer) error) (err error) {
	old, err := outTarget(path)
	if err != nil {
		return err
	}
	created, err := mkdirs(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("-o %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			for i := len(created) - 1; i >= 0; i-- {
				os.Remove(created[i])
			}
		}
	}()
	tmp, err := createTemp(filepath.Dir(path), "."+filepath.Base(path)+".")
	if err != nil {
		return fmt.Errorf("-o %s: cannot create it: %w", path, bareError(err))
	}
	fail := func(e error) error {
		tmp.Close()
		os.Remove(tmp.Name())
		return e
	}
	if old != nil {
		if err := keepOwnerAndMode(tmp, old); err != nil {
			return fail(fmt.Errorf("-o %s: cannot keep its mode: %w", path, bareError(err)))
		}
	}
	if err := write(newWriteback(tmp)); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(fmt.Errorf("-o %s: writing it: %w", path, bareError(err)))
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("-o %s: writing it: %w", path, bareError(err))
	}
	// What stands at path may have changed while the fragment was written.
	if _, err := outTarget(path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("-o %s: cannot replace it: %w", path, bareError(err))
	}
	// The new name is durable once the directory is on disk too.
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// outTarget is what stands at -o's path: nil when nothing (or a missing
// directory above it: mkdirs makes it or names what blocks it), the file's
// status when it is a regular file, and an error naming the path and its
// kind for anything else. The path is not followed: a symbolic link is
// refused, not replaced and not written through.
func outTarget(path string) (fs.FileInfo, error) {
	st, err := os.Lstat(path)
	if err != nil {
		if os.IsNotExist(err) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil
		}
		return nil, fmt.Errorf("-o %s: %w", path, bareError(err))
	}
	m := st.Mode()
	switch {
	case m.IsRegular():
		return st, nil
	case m.IsDir():
		return nil, fmt.Errorf("-o %s: is a directory; name the file to write in it (e.g. %s)", path, filepath.Join(path, "structs.toml"))
	}
	kind := regfile.Kind(m)
	if kind == "a special file" {
		kind = "not a regular file"
	}
	return nil, fmt.Errorf("-o %s: is %s, and -o replaces only a regular file; name a regular file (or a new one), or leave -o out to write to stdout", path, kind)
}

// createTemp makes a new file in dir named prefix and a random suffix,
// with O_EXCL (never an existing name) and mode 0666 less the umask, as a
// new file written in place would have.
func createTemp(dir, prefix string) (*os.File, error) {
	var err error
	for range 16 {
		var f *os.File
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, err
}

// keepOwnerAndMode gives f the permission bits of the file it replaces,
// and, when the process may (as root), its owner and group.
func keepOwnerAndMode(f *os.File, old fs.FileInfo) error {
	if sys, ok := old.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
		if err := f.Chown(int(sys.Uid), int(sys.Gid)); err != nil {
			return err
		}
	}
	return f.Chmod(old.Mode().Perm() | old.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
}

// mkdirs makes dir and the missing directories above it, and returns those
// it made, outermost first. What stands in the way is named.
func mkdirs(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err == nil {
			if !st.IsDir() {
				return nil, fmt.Errorf("%s is not a directory", d)
			}
			break
		}
		// ENOTDIR: a file stands above d; walking on up names it.
		if !os.IsNotExist(err) && !errors.Is(err, syscall.ENOTDIR) {
			return nil, fmt.Errorf("%s: %w", d, bareError(err))
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil {
			for j := len(made) - 1; j >= 0; j-- {
				os.Remove(made[j])
			}
			return nil, fmt.Errorf("cannot create the directory %s: %w", missing[i], bareError(err))
		}
		made = append(made, missing[i])
	}
	return made, nil
}

// bareError is err without the path an *fs.PathError or *os.LinkError
// names, which may be a temporary file's: the caller names the user's.
func bareError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
