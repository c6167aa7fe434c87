package hostile

import (
	"os"
	"path/filepath"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// odrUnits are two C units of one shared object that break the One
// Definition Rule: struct odr_size has another size in each, struct
// odr_members the same size with other members, struct odr_msize the same
// size and member names and offsets with a member of another size, struct
// odr_bits the same bytes with other bitfields; struct odr_same is an
// identical copy in both (the ordinary case, a header included twice).
var odrUnits = map[string]string{
	"odr_a.c": "struct odr_size { int a; };\nstruct odr_members { int a; int b; };\nstruct odr_same { int s; };\n" +
		"struct odr_msize { int a; int b; };\nstruct odr_bits { unsigned a : 3; unsigned b : 5; };\n" +
		"struct odr_size *odr_pa; struct odr_members *odr_ma; struct odr_same *odr_sa; struct odr_msize *odr_za; struct odr_bits *odr_ba;\n",
	"odr_b.c": "struct odr_size { long a; long b; };\nstruct odr_members { int x; int y; };\nstruct odr_same { int s; };\n" +
		"struct odr_msize { int a; short b; };\nstruct odr_bits { unsigned a : 4; unsigned b : 4; };\n" +
		"struct odr_size *odr_pb; struct odr_members *odr_mb; struct odr_same *odr_sb; struct odr_msize *odr_zb; struct odr_bits *odr_bb;\n",
}

// ODRObject builds "odr.so" from odrUnits with gcc -g: extract --all must
// refuse odr_size, odr_members, odr_msize and odr_bits by name, never take
// the first unit's copy, and keep odr_same. It needs gcc.
func ODRObject(dir string) (ELFCase, error) {
	var srcs []string
	for _, name := range []string{"odr_a.c", "odr_b.c"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(odrUnits[name]), 0o644); err != nil {
			return ELFCase{}, err
		}
		srcs = append(srcs, p)
	}
	out := filepath.Join(dir, "odr.so")
	args := append([]string{"-g", "-shared", "-fPIC", "-o", out}, srcs...)
	return ELFCase{Name: "odr", Path: out}, cc.Run(dir, args...)
}
