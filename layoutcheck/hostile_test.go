package layoutcheck

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/hostile"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// TestHostileObjects runs check, show and extract on each crafted object:
// each ends with a report or a one-line input error saying what is wrong,
// never a panic, a stack overflow, a hang or gigabytes of memory.
func TestHostileObjects(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("crafted objects need gcc: %v", err)
	}
	sp, err := compiled.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := hostile.Build(t.TempDir(), 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	// What each case must say; "" accepts a report.
	want := map[string]string{
		"cyclic-struct":       "",
		"cyclic-array":        "",
		"cyclic-pointer":      "",
		"type-chain":          "nests more than 20000 types deep",
		"exprloc-2^63":        "runs past the end",
		"exprloc-loop":        "runs past the end",
		"big-array":           "",
		"bomb-shf-compressed": "inflates to more than its declared 100 bytes",
		"bomb-zdebug":         "inflates to more than its declared 100 bytes",
		"fifo-input":          "is a FIFO, not a regular file",
		"debuglink-fifo":      "no DWARF anywhere",
		"debuglink-escape":    `"../outside.debug" is not a plain file name`,
	}
	dirs := []string{t.TempDir()}
	for _, c := range cases {
		w, ok := want[c.Name]
		if !ok {
			t.Fatalf("case %s has no expectation", c.Name)
		}
		t.Run(c.Name, func(t *testing.T) {
			expect := func(what string, err error) {
				t.Helper()
				if err == nil {
					if w != "" {
						t.Fatalf("%s: no error, want %q", what, w)
					}
					return
				}
				var ie *elfread.InputError
				if !errors.As(err, &ie) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("%s: want a one-line *InputError, got %T %q", what, err, err)
				}
				if w != "" && !strings.Contains(err.Error(), w) {
					t.Fatalf("%s: %q does not say %q", what, err, w)
				}
			}
			_, err := Check(context.Background(), []string{c.Path}, Options{Spec: sp, DebugDirs: dirs})
			expect("check", err)
			var out bytes.Buffer
			_, err = Show(context.Background(), c.Path, hostile.StructName, ShowOptions{Spec: sp, DebugDirs: dirs}, &out)
			expect("show", err)
			if out.Len() > 64<<10 {
				t.Fatalf("show printed %d bytes", out.Len())
			}
			out.Reset()
			err = release.Extract(c.Path, &out, release.ExtractOptions{Names: []string{hostile.StructName}, Spec: sp, DebugDirs: dirs})
			if c.Name == "big-array" {
				if err == nil || !strings.Contains(err.Error(), "cannot be extracted") {
					t.Fatalf("extract of a 2^40-byte member: %v", err)
				}
				return
			}
			expect("extract", err)
		})
	}
}

// TestShowSummarisesHugeGaps: a member after 2^40 bytes of array gets one
// cacheline comment, for the last boundary the array crosses (as pahole
// prints it), not one line for each of the 2^34 boundaries.
func TestShowSummarisesHugeGaps(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("crafted objects need gcc: %v", err)
	}
	cases, err := hostile.Build(t.TempDir(), 1<<10)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if c.Name != "big-array" {
			continue
		}
		var out bytes.Buffer
		if _, err := Show(context.Background(), c.Path, hostile.StructName, ShowOptions{}, &out); err != nil {
			t.Fatal(err)
		}
		text := out.String()
		if strings.Count(text, "--- cacheline ") != 1 || !strings.Contains(text, "cacheline 17179869184 boundary") || strings.Count(text, "\n") > 40 {
			t.Fatalf("want one cacheline comment for the gap, got:\n%s", text)
		}
		if !strings.Contains(text, "larger than a spec struct can be") {
			t.Fatalf("the 2^40-byte member is not flagged:\n%s", text)
		}
		return
	}
	t.Fatal("no big-array case")
}
