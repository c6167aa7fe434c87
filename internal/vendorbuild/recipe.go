package vendorbuild

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/nrtabi/nrtabi/internal/esc"
	"github.com/nrtabi/nrtabi/internal/proc"
)

// builder runs the steps of one build in its temporary directory dir,
// which is renamed to final when they succeed.
type builder struct {
	sources, dir, final string
	log                 *cappedLog
	logPath             string
}

// Dir, Final and Sources are for a Steps function of a test.
func (b *builder) Dir() string     { return b.dir }
func (b *builder) Final() string   { return b.final }
func (b *builder) Sources() string { return b.sources }

func (b *builder) run(ctx context.Context, steps func(context.Context, *builder) error) error {
	b.logPath = filepath.Join(b.dir, "build.log")
	f, err := os.Create(b.logPath)
	if err != nil {
		return err
	}
	b.log = &cappedLog{f: f}
	err = steps(ctx, b)
	if b.log.dropped > 0 {
		fmt.Fprintf(f, "\n[%d bytes of output not kept past %d]\n", b.log.dropped, maxLog)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	sum, err := fileSHA256(filepath.Join(b.dir, "lib", PluginFile))
	if err != nil {
		return fmt.Errorf("the vendor build made no %s: %w", PluginFile, err)
	}
	return os.WriteFile(filepath.Join(b.dir, stampFile), []byte("recipe "+RecipeVersion+"\nplugin-sha256 "+sum+"\n"), 0o644)
}

// Sh runs one step in dir (relative to the build directory), its output
// in the build log; a failure names the step and quotes the log's end.
func (b *builder) Sh(ctx context.Context, dir string, env []string, name string, args ...string) error {
	cmd := proc.Command(ctx, name, args...)
	cmd.Dir = filepath.Join(b.dir, dir)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = b.log, b.log
	fmt.Fprintf(b.log, "\n== (%s) %s %s\n", dir, name, strings.Join(args, " "))
	if err := proc.Err(ctx, cmd.Run()); err != nil {
		return fmt.Errorf("vendor build step %q in %s: %w\n%s", name+" "+strings.Join(args, " "), dir, err, esc.Text(tail(b.logPath, 15)))
	}
	return nil
}

// Extract unpacks the tarball name of the sources into the build
// directory's src.
func (b *builder) Extract(name string) error {
	f, err := os.Open(filepath.Join(b.sources, name))
	if err != nil {
		return err
	}
	defer f.Close()
	return untar(f, filepath.Join(b.dir, "src"), name)
}

// systemFabricHeader is a system libfabric's main header.
var systemFabricHeader = "/usr/include/rdma/fabric.h"

// jobs is make's -j: the cores there are, at most 2 (the recipe's
// measured setting, and a fair share of a shared machine).
func jobs() string { return "-j" + strconv.Itoa(min(runtime.NumCPU(), 2)) }

// recipe is the verified build (the vendor directory's README): libfabric
// with only the tcp, rxm, shm and sockets providers, installed under the
// entry; then the plugin with --enable-neuron against it, with -g so that
// its tables' layouts are in its DWARF. libfabric is configured for its
// final place (the renamed entry) and installed through DESTDIR into the
// temporary one; the plugin carries a RUNPATH to the final place, so it
// loads its libfabric from the cache wherever the caller runs.
func recipe(ctx context.Context, b *builder) error {
	for _, t := range []string{FabricTarball, PluginTarball} {
		if err := b.Extract(t); err != nil {
			return err
		}
	}
	fsrc := filepath.Join("src", FabricTop)
	finalFabric := filepath.Join(b.final, "fabric")
	if err := b.Sh(ctx, fsrc, nil, "./autogen.sh"); err != nil {
		return err
	}
	if err := b.Sh(ctx, fsrc, nil, "./configure", "--prefix="+finalFabric, "--enable-only",
		"--enable-tcp", "--enable-rxm", "--enable-shm", "--enable-sockets", "--disable-static"); err != nil {
		return err
	}
	if err := b.Sh(ctx, fsrc, nil, "make", jobs()); err != nil {
		return err
	}
	dest := filepath.Join(b.dir, "destdir")
	if err := b.Sh(ctx, fsrc, nil, "make", "install", "DESTDIR="+dest); err != nil {
		return err
	}
	fabric := filepath.Join(b.dir, "fabric")
	if err := os.Rename(filepath.Join(dest, finalFabric), fabric); err != nil {
		return fmt.Errorf("moving libfabric out of DESTDIR: %w", err)
	}
	if err := os.RemoveAll(dest); err != nil {
		return err
	}
	// The .la files name the final libdir, where nothing is yet; without
	// them libtool links the plugin with plain -L/-l.
	las, _ := filepath.Glob(filepath.Join(fabric, "lib", "*.la"))
	for _, la := range las {
		if err := os.Remove(la); err != nil {
			return err
		}
	}

	// Debian's libfabric-dev (1.17) puts its headers where the plugin's
	// configure looks first; the plugin then refuses them ("Libfabric
	// 1.22.0 or later is required"), or worse, builds against them.
	if _, err := os.Stat(systemFabricHeader); err == nil {
		return fmt.Errorf("%s is installed (a system libfabric, e.g. Debian's libfabric-dev): aws-ofi-nccl would find its headers before the one built here; remove it (apt-get remove libfabric-dev)", systemFabricHeader)
	}
	psrc := filepath.Join("src", PluginTop)
	if err := os.WriteFile(filepath.Join(b.dir, psrc, ".release_version"), []byte(PluginVersion+"\n"), 0o644); err != nil {
		return err
	}
	if err := b.Sh(ctx, psrc, nil, "./autogen.sh"); err != nil {
		return err
	}
	flags := []string{"CFLAGS=-g -O2", "CXXFLAGS=-g -O2", "LDFLAGS=-Wl,-rpath," + filepath.Join(finalFabric, "lib")}
	if err := b.Sh(ctx, psrc, nil, "./configure", append([]string{"--enable-neuron", "--with-libfabric=" + fabric, "--disable-tests"}, flags...)...); err != nil {
		return err
	}
	if err := b.Sh(ctx, psrc, nil, "make", jobs()); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(b.dir, "lib"), 0o755); err != nil {
		return err
	}
	if err := copyFile(filepath.Join(b.dir, psrc, "src", ".libs", PluginFile), filepath.Join(b.dir, "lib", PluginFile)); err != nil {
		return err
	}
	// The sources and objects are not needed once the plugin is out
	// (hundreds of megabytes); the log stays.
	return os.RemoveAll(filepath.Join(b.dir, "src"))
}

// copyFile copies src (following a libtool symlink) to a new file dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
