package elfread

import (
	"context"
	"os"
	"testing"
)

// BenchmarkLookupOne is the quick lookup's own share (nrtabi show of one
// struct, without the process start): open the file, find its DWARF, find
// the struct by name and lay it out, for the structs bench/layoutcheck's
// quick-lookup rows time against pahole -C (skipped, saying so, without
// libc6-dbg or libstdc++6-12-dbg).
func BenchmarkLookupOne(b *testing.B) {
	for _, c := range []struct{ name, path, want string }{
		{"libc/_IO_FILE", libcDebug, "_IO_FILE"},
		{"libc/pthread_mutex_t", libcDebug, "pthread_mutex_t"},
		{"libstdc++/_IO_FILE", libstdcxxDebug, "_IO_FILE"},
		{"libstdc++/basic_ostringstream", libstdcxxDebug, "std::basic_ostringstream<char>"},
	} {
		b.Run(c.name, func(b *testing.B) {
			if _, err := os.Stat(c.path); err != nil {
				b.Skipf("skipping: %s is not installed (%v)", c.path, err)
			}
			for b.Loop() {
				obj, err := Open(c.path)
				if err != nil {
					b.Fatal(err)
				}
				d, err := FindDebug(context.Background(), obj, Lookup{})
				if err != nil {
					b.Fatal(err)
				}
				found, err := d.FindStructs([][]string{{c.want}})
				if err != nil {
					b.Fatal(err)
				}
				if found[0] == nil {
					b.Fatalf("%s: no %s", c.path, c.want)
				}
				if _, err := d.Types().Struct(found[0].Offset); err != nil {
					b.Fatal(err)
				}
				d.Close()
				obj.Close()
			}
		})
	}
}
