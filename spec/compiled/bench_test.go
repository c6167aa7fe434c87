package compiled_test

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// firstLoadEnv makes the test binary a child that times one first load.
const firstLoadEnv = "NRTABI_SPEC_FIRST_LOAD"

// TestFirstLoadChild is BenchmarkFirstLoad's child process: it times the
// first load of a release in a fresh process and prints the nanoseconds.
// Without the variable it does nothing.
func TestFirstLoadChild(t *testing.T) {
	how, release, ok := strings.Cut(os.Getenv(firstLoadEnv), ":")
	if !ok {
		t.Skip("only as BenchmarkFirstLoad's child")
	}
	start := time.Now()
	var err error
	switch how {
	case "toml":
		_, err = spec.Load(release)
	case "compiled":
		if compiled.LoadCompiled(release) == nil {
			err = fmt.Errorf("no current compiled form of %s", release)
		}
	default:
		err = fmt.Errorf("%s=%s: want toml:RELEASE or compiled:RELEASE", firstLoadEnv, how)
	}
	d := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("first-load-ns %d\n", d.Nanoseconds())
}

// BenchmarkFirstLoad times the first load of each embedded release in a
// fresh process (what one command pays), through the TOML and the compiled
// form; ns/first-load is the load alone, ns/op includes starting the process.
func BenchmarkFirstLoad(b *testing.B) {
	for _, how := range []string{"toml", "compiled"} {
		for _, r := range spec.Releases() {
			b.Run(how+"/"+r, func(b *testing.B) {
				var total time.Duration
				n := 0
				for b.Loop() {
					cmd := exec.Command(os.Args[0], "-test.run=^TestFirstLoadChild$", "-test.count=1")
					cmd.Env = append(os.Environ(), firstLoadEnv+"="+how+":"+r)
					out, err := cmd.CombinedOutput()
					if err != nil {
						b.Fatalf("%v\n%s", err, out)
					}
					_, after, ok := strings.Cut(string(out), "first-load-ns ")
					ns, perr := strconv.ParseInt(strings.Fields(after + " x")[0], 10, 64)
					if !ok || perr != nil {
						b.Fatalf("no timing in the child's output:\n%s", out)
					}
					total += time.Duration(ns)
					n++
				}
				b.ReportMetric(float64(total.Nanoseconds())/float64(n), "ns/first-load")
			})
		}
	}
}

// BenchmarkLoadTOMLRelease is a repeated load of each embedded release from
// its TOML (spec.Load, in a process that loads more than once).
func BenchmarkLoadTOMLRelease(b *testing.B) {
	for _, r := range spec.Releases() {
		b.Run(r, func(b *testing.B) {
			for b.Loop() {
				if _, err := spec.Load(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoadCompiledRelease is a repeated load of each embedded release
// from its compiled form.
func BenchmarkLoadCompiledRelease(b *testing.B) {
	for _, r := range spec.Releases() {
		b.Run(r, func(b *testing.B) {
			for b.Loop() {
				if compiled.LoadCompiled(r) == nil {
					b.Fatal("no compiled form")
				}
			}
		})
	}
}
