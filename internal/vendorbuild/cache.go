package vendorbuild

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// stampFile marks an entry whole: it is written last, before the rename,
// and holds the plugin's sha256, which open checks against the file.
const stampFile = "complete"

// errNoEntry is open finding no entry at all (as opposed to a broken one).
var errNoEntry = errors.New("no cache entry")

// open is the build in the entry dir: errNoEntry when there is none,
// another error when there is one that is not whole.
func open(dir string) (*Build, error) {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, errNoEntry
	} else if err != nil {
		return nil, err
	}
	b := &Build{
		Dir:       dir,
		Plugin:    filepath.Join(dir, "lib", PluginFile),
		FabricLib: filepath.Join(dir, "fabric", "lib"),
		Log:       filepath.Join(dir, "build.log"),
	}
	stamp, err := os.ReadFile(filepath.Join(dir, stampFile))
	if err != nil {
		return nil, fmt.Errorf("%s has no stamp (%s): an interrupted or foreign build", dir, stampFile)
	}
	want := ""
	for _, line := range strings.Split(string(stamp), "\n") {
		if v, ok := strings.CutPrefix(line, "plugin-sha256 "); ok {
			want = v
		}
	}
	got, err := fileSHA256(b.Plugin)
	if err != nil {
		return nil, fmt.Errorf("%s: the plugin: %w", dir, err)
	}
	if want == "" || got != want {
		return nil, fmt.Errorf("%s: %s has sha256 %s, the stamp says %q", dir, PluginFile, got, want)
	}
	return b, nil
}

// lock takes the entry's lock file, waiting (polled, so ctx can end the
// wait) while another process holds it. The lock dies with its holder.
func lock(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for another build of %s: %w", filepath.Dir(path), context.Cause(ctx))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// maxLog bounds the captured build output; what follows is counted, not
// kept.
const maxLog = 32 << 20

// cappedLog is the build's log file, cut at maxLog bytes.
type cappedLog struct {
	f       *os.File
	n       int64
	dropped int64
}

func (l *cappedLog) Write(p []byte) (int, error) {
	keep := min(int64(len(p)), max(maxLog-l.n, 0))
	if keep > 0 {
		if _, err := l.f.Write(p[:keep]); err != nil {
			return 0, err
		}
		l.n += keep
	}
	l.dropped += int64(len(p)) - keep
	return len(p), nil
}

// tail is the last n lines of the log, for an error.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
