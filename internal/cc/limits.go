package cc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nrtabi/nrtabi/internal/proc"
)

// Limits bound a run of the driver on input nrtabi does not trust (the
// headers of check --headers, docs/layoutcheck.md#headers-as-input): the
// compiler then is an untrusted program, which a header can make read
// /dev/zero, expand a macro exponentially or print without end. The
// wall-clock bound is the context's deadline; these are the rest.
type Limits struct {
	// Memory is each process's address space (RLIMIT_AS) in bytes; 0: not
	// limited. The driver's children (cc1, as, ld) inherit it.
	Memory int64
	// CPU is each process's processor time (RLIMIT_CPU); 0: not limited.
	// A backstop under the context's deadline, for a child that escaped
	// the process group.
	CPU time.Duration
	// Output is how many bytes of output are kept in Error.Output; what
	// follows is read (the driver never blocks on a full pipe) and counted
	// in Error.Dropped, not kept. 0: all of it is kept.
	Output int
	// Keep, if set, sees each line of output (without its newline, cut at
	// MaxLine bytes) and says whether to keep it; a line it refuses is
	// counted in neither Output nor Dropped. It runs on the goroutine that
	// reads the output, one line at a time.
	Keep func(line string) bool
}

// MaxLine is the longest line of output Limits.Keep sees; the rest of a
// longer line is counted as dropped.
const MaxLine = 4096

// Exceeded names the resource a limited run ran out of, read from what the
// driver printed: its children say so in their own words and exit.
const (
	ExceededMemory = "memory"
	ExceededCPU    = "CPU time"
)

// limitShell runs the driver under the limits. Go cannot set a child's
// rlimits between fork and exec (SysProcAttr has no field for them), and a
// syscall.Prlimit on the started child races with its fork of cc1, which
// would then run unlimited; prlimit(1) is util-linux, absent from busybox
// and minimal images. /bin/sh is everywhere a compiler driver is (gcc runs
// its own helpers through it), and ulimit in dash, bash, busybox and mksh
// sets both the soft and the hard limit, which exec and every later fork
// inherit. The chain is &&: a shell that cannot set a limit fails the run
// instead of running the compiler unbounded.
const limitShell = "/bin/sh"

// limitScript is the shell's script: the limits are decimal numbers made
// here, never input; the command line follows as "$@".
func limitScript(lim Limits) string {
	var steps []string
	if lim.Memory > 0 {
		kb := clampLimit(syscall.RLIMIT_AS, lim.Memory) / 1024
		steps = append(steps, "ulimit -v "+strconv.FormatInt(max(kb, 1), 10))
	}
	if lim.CPU > 0 {
		// The soft limit sends SIGXCPU, after which gcc's driver names the
		// child it lost; the hard one, a second later, SIGKILL.
		soft := int64((lim.CPU + time.Second - 1) / time.Second)
		hard := max(clampHard(syscall.RLIMIT_CPU, soft+1), 1)
		soft = max(min(clampLimit(syscall.RLIMIT_CPU, soft), hard), 1)
		// Soft first: a hard limit under the current soft one is refused.
		steps = append(steps, "ulimit -S -t "+strconv.FormatInt(soft, 10), "ulimit -H -t "+strconv.FormatInt(hard, 10))
	}
	return strings.Join(append(steps, `exec "$@"`), " && ")
}

// clampLimit is want, or the current soft limit if that is lower: a limit
// the user set on nrtabi stays on its compiler.
func clampLimit(resource int, want int64) int64 { return clamp(resource, want, false) }

// clampHard is want, or the current hard limit if that is lower.
func clampHard(resource int, want int64) int64 { return clamp(resource, want, true) }

func clamp(resource int, want int64, hard bool) int64 {
	var cur syscall.Rlimit
	if err := syscall.Getrlimit(resource, &cur); err != nil {
		return want
	}
	have := cur.Cur
	if hard {
		have = cur.Max
	}
	if have < uint64(max(want, 0)) {
		return int64(have)
	}
	return want
}

// RunLimited is RunContext with the driver bounded by lim. A run that ran
// out of memory or CPU time is an *Error whose Exceeded names the limit;
// one cut short by ctx wraps ctx's cause (context.DeadlineExceeded).
func RunLimited(ctx context.Context, dir string, lim Limits, args ...string) error {
	d := Driver()
	words := commandLine(d, args)
	name, argv := words[0], words[1:]
	if lim.Memory > 0 || lim.CPU > 0 {
		name, argv = limitShell, append([]string{"-c", limitScript(lim), "sh"}, words...)
	}
	cmd := proc.Command(ctx, name, argv...)
	cmd.Dir = dir
	out := &limitedOutput{lim: lim}
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	out.flush()
	var ee *exec.ExitError
	if errors.As(err, &ee) && out.exceeded == "" {
		// The driver itself hit the CPU limit: no child was left to say so.
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGXCPU {
			out.exceeded = ExceededCPU
		}
	}
	if err != nil {
		return &Error{Driver: d, Args: words[len(d):], Output: out.kept.String(), Dropped: out.dropped, Exceeded: out.exceeded, Err: proc.Err(ctx, err)}
	}
	return nil
}

// ObjectLimited is ObjectContext with the driver bounded by lim.
func ObjectLimited(ctx context.Context, dir, src, obj string, lim Limits, flags ...string) error {
	return RunLimited(ctx, dir, lim, objectArgs(src, obj, flags)...)
}

// limitedOutput keeps the first lim.Output bytes of the lines lim.Keep
// keeps and counts the rest; it never refuses a write, so the child never
// blocks on a full pipe. It also notices the messages in which the driver's
// children say they ran out of memory or CPU time.
type limitedOutput struct {
	lim      Limits
	line     []byte // the line being read, at most MaxLine bytes
	long     int64  // bytes of the current line past MaxLine
	kept     bytes.Buffer
	dropped  int64
	exceeded string
}

func (w *limitedOutput) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		room := MaxLine - len(w.line)
		if len(chunk) > room {
			w.long += int64(len(chunk) - room)
			chunk = chunk[:room]
		}
		w.line = append(w.line, chunk...)
		if i < 0 {
			break
		}
		w.endLine()
		p = p[i+1:]
	}
	return n, nil
}

// flush ends an unterminated last line.
func (w *limitedOutput) flush() {
	if len(w.line) > 0 || w.long > 0 {
		w.endLine()
	}
}

// exhaustion are the messages of gcc's cc1 and driver, ld and as when an
// allocation fails or the CPU limit kills them.
var exhaustion = []struct{ text, limit string }{
	{"out of memory", ExceededMemory},
	{"memory exhausted", ExceededMemory},
	{"Cannot allocate memory", ExceededMemory},
	{"std::bad_alloc", ExceededMemory},
	{"CPU time limit exceeded", ExceededCPU},
}

func (w *limitedOutput) endLine() {
	line := string(w.line)
	size := int64(len(w.line)) + w.long + 1
	w.line, w.long = w.line[:0], 0
	if w.exceeded == "" {
		for _, e := range exhaustion {
			if strings.Contains(line, e.text) {
				w.exceeded = e.limit
				break
			}
		}
	}
	if w.lim.Keep != nil && !w.lim.Keep(line) {
		return
	}
	if w.lim.Output > 0 && w.kept.Len()+len(line)+1 > w.lim.Output {
		w.dropped += size
		return
	}
	w.kept.WriteString(line)
	w.kept.WriteByte('\n')
	w.dropped += size - int64(len(line)) - 1 // the part of a long line cut off
}

// droppedNote says what was not kept, for Error: "" when nothing was.
func (e *Error) droppedNote() string {
	if e.Dropped == 0 {
		return ""
	}
	return fmt.Sprintf("\n(%d more bytes of output not kept)", e.Dropped)
}
