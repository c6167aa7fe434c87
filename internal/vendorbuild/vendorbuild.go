// Package vendorbuild builds the real net plugin — aws-ofi-nccl
// (libnccom-net.so, --enable-neuron) over libfabric — from the vendor
// tarballs, for the tests and the benchmark that put it in the loop
// (docs/runtime-boundary.md#the-net-plugin). Third-party code is built in a
// scratch cache outside the tree, never into it: one directory per pair of
// tarballs, named by their sha256 and the recipe's version, made in a
// temporary directory and renamed into place when complete, so a reader sees
// a whole build or none. A second process that wants the same build waits
// for the first (a lock file) and reuses it; a cache entry without its stamp,
// or whose plugin does not match the stamp's hash, is removed and rebuilt.
package vendorbuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The tarballs the recipe builds (their sha256 are in the vendor
// directory's README; the cache key is computed from the files themselves).
const (
	FabricTarball = "libfabric-2.6.0.tar.gz"
	FabricTop     = "libfabric-2.6.0"
	PluginTarball = "aws-ofi-nccl-1.21.1.tar.gz"
	PluginTop     = "aws-ofi-nccl-1.21.1"
	// PluginVersion is what the plugin's autogen.sh reads from
	// .release_version: a tarball has no git tag to take it from.
	PluginVersion = "1.21.1"
	// PluginFile is the plugin's name, as libnrt dlopens it.
	PluginFile = "libnccom-net.so"
)

// RecipeVersion is part of the cache key: a change to the recipe below
// (flags, providers, steps) must bump it, so an entry built the old way is
// never reused.
const RecipeVersion = "1"

// EnvSources overrides where the tarballs are looked for.
const EnvSources = "NRTABI_VENDOR"

// Timeout bounds one whole build (both packages, every step) when the
// caller's context has no earlier deadline. The recipe takes about 70 s on
// two idle cores; a loaded machine gets several times that.
const Timeout = 10 * time.Minute

// Build is a finished build in the cache.
type Build struct {
	Dir       string        // the cache entry
	Plugin    string        // Dir/lib/libnccom-net.so, built with -g
	FabricLib string        // libfabric's lib directory: LD_LIBRARY_PATH for the plugin
	Cached    bool          // reused, not built by this call
	Took      time.Duration // how long this call took (waiting, building)
	Log       string        // the build's captured output (Dir/build.log)
}

// Env is what a process that loads the plugin needs: libfabric found
// first, and its tcp provider with the plugin's send/recv protocol (the
// only pair that runs without special hardware, in a network namespace).
func (b *Build) Env() []string {
	return []string{"FI_PROVIDER=tcp", "OFI_NCCL_PROTOCOL=SENDRECV"}
}

// Absent is the tarballs not being there: the caller says so (a test skips
// with it as the reason) and runs against the plugin double instead.
type Absent struct {
	Where   string   // the directory searched ("" if none was found)
	Missing []string // the tarballs not found in it
}

func (e *Absent) Error() string {
	if e.Where == "" {
		return fmt.Sprintf("the vendor tarballs (%s, %s) are not here: no shared/vendor above the checkout and $%s unset", FabricTarball, PluginTarball, EnvSources)
	}
	return fmt.Sprintf("the vendor tarballs are not all here: %s lacks %s (set $%s to the directory that holds them)", e.Where, strings.Join(e.Missing, ", "), EnvSources)
}

// Sources finds the directory of the tarballs: $NRTABI_VENDOR, else the
// nearest shared/vendor in root or above it (the layout of a checkout beside
// the shared inputs). An *Absent says what is missing.
func Sources(root string) (string, error) {
	if d := os.Getenv(EnvSources); d != "" {
		return d, present(d)
	}
	for dir := root; ; {
		d := filepath.Join(dir, "shared", "vendor")
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d, present(d)
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", &Absent{}
		}
		dir = up
	}
}

func present(dir string) error {
	var missing []string
	for _, f := range []string{FabricTarball, PluginTarball} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || !st.Mode().IsRegular() {
			missing = append(missing, f)
		}
	}
	if missing != nil {
		return &Absent{Where: dir, Missing: missing}
	}
	return nil
}

// CacheRoot is where the builds are kept: $XDG_CACHE_HOME/nrtabi/vendor,
// else ~/.cache/nrtabi/vendor.
func CacheRoot() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the vendor build: %w", err)
	}
	return filepath.Join(d, "nrtabi", "vendor"), nil
}

// Key is the cache entry's name: the recipe's version and the sha256 of
// both tarballs, hashed together.
func Key(sources string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "recipe %s\n", RecipeVersion)
	for _, f := range []string{FabricTarball, PluginTarball} {
		sum, err := fileSHA256(filepath.Join(sources, f))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %s\n", sum, f)
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Options say where to build from and to; the zero value is the defaults.
type Options struct {
	Sources string // the tarballs' directory; "" = Sources(Root)
	Root    string // the checkout (for Sources); "" = the working directory
	Cache   string // the cache root; "" = CacheRoot()
	// steps replaces the recipe (the tests of the cache run a fake one);
	// nil is the real recipe.
	steps func(ctx context.Context, b *builder) error
}

// Get returns the cached build of the tarballs, building it first when
// there is none (or a broken one). It waits for another process building
// the same entry. ctx bounds the whole call; with no deadline, Timeout does.
func Get(ctx context.Context, o Options) (*Build, error) {
	start := time.Now()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, Timeout)
		defer cancel()
	}
	if o.Sources == "" {
		root := o.Root
		if root == "" {
			wd, err := os.Getwd()
			if err != nil {
				return nil, err
			}
			root = wd
		}
		d, err := Sources(root)
		if err != nil {
			return nil, err
		}
		o.Sources = d
	} else if err := present(o.Sources); err != nil {
		return nil, err
	}
	if o.Cache == "" {
		d, err := CacheRoot()
		if err != nil {
			return nil, err
		}
		o.Cache = d
	}
	if o.steps == nil {
		o.steps = recipe
	}
	key, err := Key(o.Sources)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Cache, 0o755); err != nil {
		return nil, err
	}
	unlock, err := lock(ctx, filepath.Join(o.Cache, key+".lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()

	final := filepath.Join(o.Cache, key)
	if b, err := open(final); err == nil {
		b.Cached, b.Took = true, time.Since(start)
		return b, nil
	} else if !errors.Is(err, errNoEntry) {
		// A broken entry (no stamp, a plugin that is not the one built):
		// it is removed, never used.
		if err := os.RemoveAll(final); err != nil {
			return nil, fmt.Errorf("removing the broken vendor build %s: %w", final, err)
		}
	}
	tmp, err := os.MkdirTemp(o.Cache, key+".build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp) // gone after the rename; the debris of a failure otherwise
	bl := &builder{sources: o.Sources, dir: tmp, final: final}
	if err := bl.run(ctx, o.steps); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, final); err != nil {
		return nil, fmt.Errorf("moving the vendor build into place: %w", err)
	}
	b, err := open(final)
	if err != nil {
		return nil, fmt.Errorf("the vendor build just made is not whole: %w", err)
	}
	b.Took = time.Since(start)
	return b, nil
}
