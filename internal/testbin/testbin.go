// Package testbin builds one of this module's commands once per test
// process, for tests that run it as a real process.
package testbin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Binary is a command built on first use.
type Binary struct {
	pkg, name string
	env, args []string

	once sync.Once
	dir  string
	path string
	err  error
}

// New describes the command in package pkg (a path go build accepts),
// built as name with extra environment env and extra go build args.
func New(pkg, name string, env []string, args ...string) *Binary {
	return &Binary{pkg: pkg, name: name, env: env, args: args}
}

// Path builds the command the first time and returns its path; a build
// failure fails t.
func (b *Binary) Path(t testing.TB) string {
	t.Helper()
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "nrtabi-testbin-"); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, b.name)
		args := append(append([]string{"build"}, b.args...), "-o", b.path, b.pkg)
		cmd := exec.Command("go", args...)
		cmd.Env = append(os.Environ(), b.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("%v go %v: %w\n%s", b.env, args, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Remove deletes what was built (from TestMain, after m.Run).
func (b *Binary) Remove() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// ErrNoGo is Program's error when no go command is on PATH.
var ErrNoGo = errors.New("the go command is not on PATH")

// Program builds a one-file Go program outside this module (main.go and a
// go.mod of module name in dir) as dir/name, without cgo and within 3
// minutes: a real Go binary with DWARF for the readers' tests. An absent
// go command is ErrNoGo, for the caller to skip on or log.
func Program(dir, name, src string) (string, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoGo, err)
	}
	for file, text := range map[string]string{"main.go": src, "go.mod": "module " + name + "\n\ngo 1.21\n"} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, gobin, "build", "-o", name, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build of %s: %w\n%s", name, err, out)
	}
	return filepath.Join(dir, name), nil
}
