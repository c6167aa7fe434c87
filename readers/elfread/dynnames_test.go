package elfread

import (
	"debug/elf"
	"os"
	"slices"
	"testing"
)

// TestDynamicNamesInPlace: the in-place reading of DT_SONAME and DT_NEEDED
// gives what debug/elf's DynString gives, on the system's own libraries.
func TestDynamicNamesInPlace(t *testing.T) {
	n := 0
	for _, p := range []string{
		"/lib/x86_64-linux-gnu/libc.so.6",
		"/lib/x86_64-linux-gnu/libm.so.6",
		"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
		"/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30",
		"/bin/sh",
	} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		o, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		ef, err := elf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		soname, err := ef.DynString(elf.DT_SONAME)
		if err != nil {
			t.Fatal(err)
		}
		needed, err := ef.DynString(elf.DT_NEEDED)
		if err != nil {
			t.Fatal(err)
		}
		if got := []string{o.SONAME}; len(soname) > 0 && !slices.Equal(got, soname[:1]) || len(soname) == 0 && o.SONAME != "" {
			t.Errorf("%s: SONAME %q, debug/elf %q", p, o.SONAME, soname)
		}
		if !slices.Equal(o.Needed, needed) {
			t.Errorf("%s: NEEDED %q, debug/elf %q", p, o.Needed, needed)
		}
		if len(needed) > 0 {
			n++
		}
		ef.Close()
		o.Close()
	}
	if n == 0 {
		t.Fatal("no library with DT_NEEDED entries found to compare")
	}
}
