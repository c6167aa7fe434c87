package elfread

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// gdb's `ptype/o` is the second independent reader of the wide run: it
// follows dwz supplements (DW_TAG_imported_unit, .gnu_debugaltlink), which
// pahole 1.24 prints nothing of. It prints a struct's members with
// "offset | size" (a bitfield's "byte: bit" is its absolute bit position
// split, not a storage unit), a union's members with their size only, and
// no base classes among the members; the comparison follows
// (gdbStruct: Base members are left out of the graph's side).

var (
	gdbHeadRe   = regexp.MustCompile(`type = (struct|union|class) (.*?)(?: : .*)? \{$`)
	gdbMemberRe = regexp.MustCompile(`^/\*\s*(?:(\d+)(?::\s*(\d+))?\s*\|)?\s*(\d+)\s*\*/\s*(.*)$`)
)

// runGdbPtype runs gdb -batch with one ptype/o per name and parses what
// it prints. sysroot lets gdb find a supplement named by its installed
// path (/usr/lib/debug/.dwz/...) under an extracted package's root.
func runGdbPtype(ctx context.Context, file, sysroot string, names []string, timeout time.Duration) ([]paholeStruct, error) {
	bin, err := exec.LookPath("gdb")
	if err != nil {
		return nil, errors.New("gdb not found (install the Debian package gdb)")
	}
	// one -ex per command: a command file stops at its first error (a
	// name gdb does not find); the names go in chunks to bound argv
	var all []paholeStruct
	for len(names) > 0 {
		n := min(len(names), 1500)
		chunk := names[:n]
		names = names[n:]
		args := []string{"-nx", "-batch"}
		if sysroot != "" {
			// gdb looks for a supplement at DIR/.dwz/<triplet>/NAME and
			// by build-id under its debug-file-directory
			args = append(args, "-iex", "set debug-file-directory "+filepath.Join(sysroot, "usr", "lib", "debug"))
		}
		for _, name := range chunk {
			args = append(args, "-ex", "echo @@@\\n", "-ex", "ptype/o "+name)
		}
		args = append(args, "-ex", "echo @@@\\n", file)
		cctx, cancel := context.WithTimeout(ctx, timeout)
		cmd := exec.CommandContext(cctx, bin, args...)
		out := &capped{max: maxPaholeOutput}
		errOut := &capped{max: 1 << 16, drop: true}
		cmd.Stdout, cmd.Stderr = out, errOut
		cmd.WaitDelay = 2 * time.Second
		err := cmd.Run()
		timedOut := cctx.Err() != nil
		cancel()
		if timedOut {
			return nil, fmt.Errorf("gdb %s: no answer in %v", file, timeout)
		}
		if out.over {
			return nil, fmt.Errorf("gdb %s: more than %d bytes of output", file, out.max)
		}
		if err != nil {
			return nil, fmt.Errorf("gdb %s: %v: %s", file, err, errOut.buf.String())
		}
		if strings.Contains(errOut.buf.String(), "could not find '.gnu_debugaltlink' file") {
			return nil, fmt.Errorf("gdb %s: the dwz supplement is not found", file)
		}
		ps, err := parseGdbPtype(out.buf.String())
		if err != nil {
			return nil, err
		}
		all = append(all, ps...)
	}
	return all, nil
}

// parseGdbPtype reads ptype/o's output: one struct after each "@@@".
func parseGdbPtype(text string) ([]paholeStruct, error) {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	var out []paholeStruct
	var cur *paholeStruct
	depth := 0
	// pending is the depth-1 member whose nested body is open: its name
	// comes with the closing "} name;".
	var pending *paholeMember
	for sc.Scan() {
		line := sc.Text()
		s := strings.TrimSpace(line)
		if s == "@@@" {
			cur, depth, pending = nil, 0, nil
			continue
		}
		if cur == nil {
			if m := gdbHeadRe.FindStringSubmatch(s); m != nil && depth == 0 {
				out = append(out, paholeStruct{Kind: m[1], Name: m[2]})
				cur = &out[len(out)-1]
				depth = 1
			}
			continue
		}
		if m := regexp.MustCompile(`^/\* total size \(bytes\):\s*(\d+) \*/$`).FindStringSubmatch(s); m != nil {
			if depth == 1 {
				cur.Size, _ = strconv.ParseInt(m[1], 10, 64)
				cur.HasSize = true
			}
			continue
		}
		if strings.HasPrefix(s, "}") {
			depth--
			if depth == 0 {
				cur = nil
				continue
			}
			if depth == 1 && pending != nil {
				pending.Name = declName(strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(s, "}")), ";"))
				pending = nil
			}
			continue
		}
		m := gdbMemberRe.FindStringSubmatch(s)
		if m == nil {
			if strings.HasSuffix(s, "{") {
				depth++ // a body without an offset comment (a method's? none in C)
			}
			continue
		}
		decl := strings.TrimSpace(m[4])
		if strings.HasPrefix(decl, "XXX") {
			continue
		}
		opens := strings.HasSuffix(decl, "{")
		if depth == 1 && !strings.HasPrefix(decl, "static ") {
			pm := paholeMember{Decl: decl}
			pm.Off, _ = strconv.ParseInt(m[1], 10, 64)
			if m[2] != "" {
				pm.IsBit = true
				pm.Bit, _ = strconv.ParseInt(m[2], 10, 64)
			}
			pm.Size, _ = strconv.ParseInt(m[3], 10, 64)
			d := strings.TrimSuffix(decl, ";")
			if b := regexp.MustCompile(`\s*:\s*(\d+)$`).FindStringSubmatch(d); b != nil {
				pm.BitSize, _ = strconv.ParseInt(b[1], 10, 64)
				d = strings.TrimSuffix(d, b[0])
			}
			if !opens {
				pm.Name = declName(d)
			}
			cur.Members = append(cur.Members, pm)
			if opens {
				pending = &cur.Members[len(cur.Members)-1]
			}
		}
		if opens {
			depth++
			if depth > 1000 {
				return nil, errors.New("gdb output nested deeper than 1000")
			}
		}
	}
	return out, sc.Err()
}

// gdbNames are the ptype arguments for the graph's named aggregates:
// "struct NAME", "union NAME", "class NAME", once each.
func gdbNames(byLocal map[uint64][]modelAgg) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range byLocal {
		for _, m := range l {
			if m.t.Name == "" || strings.ContainsAny(m.t.Name, "'\"\n") {
				continue
			}
			n := m.t.Kind.String() + " " + m.t.Name
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}

// agreeGdb compares gdb's structs with the graph's of the same name (the
// best of several), as agreeByName does pahole's, on gdb's terms: no base
// classes among the members, a union's members at 0, a bitfield's
// absolute bit position only.
func agreeGdb(byLocal map[uint64][]modelAgg, file string, gs []paholeStruct) agreeStats {
	idx := map[string][]modelAgg{}
	for _, l := range byLocal {
		for _, m := range l {
			idx[m.t.Name] = append(idx[m.t.Name], m)
		}
	}
	var st agreeStats
	for i := range gs {
		g := &gs[i]
		var best *agreeStats
		for _, m := range idx[g.Name] {
			one := agreeStats{Structs: 1}
			diff := func(class, member, ph, mo string) {
				one.Diffs = append(one.Diffs, disagreement{"gdb/" + class, file, g.Kind + " " + g.Name, member, ph, mo})
			}
			gdbStruct(g, m, diff, &one)
			if best == nil || len(one.Diffs) < len(best.Diffs) {
				best = &one
			}
		}
		if best != nil {
			st.add(*best)
		}
	}
	return st
}

func gdbStruct(g *paholeStruct, m modelAgg, diff func(class, member, ph, mo string), st *agreeStats) {
	t := m.t
	if g.HasSize && g.Size != t.Size {
		diff("struct-size", "", itoa(g.Size), itoa(t.Size))
	}
	// gdb lists no base classes among the members and hides the vtable
	// pointer (an artificial "_vptr.NAME" member)
	var fields []int
	for i := range t.Fields {
		f := &t.Fields[i]
		if !f.Base && !(f.Artificial && strings.HasPrefix(f.Name, "_vptr.")) {
			fields = append(fields, i)
		}
	}
	if len(fields) != len(g.Members) {
		var a, b []string
		for _, pm := range g.Members {
			a = append(a, pm.Name)
		}
		for _, i := range fields {
			b = append(b, t.Fields[i].Label())
		}
		diff("member-count", "", fmt.Sprintf("%d %v", len(a), a), fmt.Sprintf("%d %v", len(b), b))
		return
	}
	for k, i := range fields {
		pm, f := &g.Members[k], &t.Fields[i]
		st.Members++
		label := f.Label()
		if pm.Name != f.Name {
			diff("member-name", label, fmt.Sprintf("%q (%s)", pm.Name, pm.Decl), fmt.Sprintf("%q", f.Name))
		}
		if pm.Size != f.Size() {
			diff("member-type-size", label, itoa(pm.Size), itoa(f.Size()))
		}
		if pm.IsBit != (f.BitSize > 0) && t.Kind.String() != "union" {
			diff("bitfield-ness", label, pm.Decl, fmt.Sprintf("bitfield %v", f.BitSize > 0))
			continue
		}
		switch {
		case t.Kind.String() == "union":
			if f.Offset != 0 || f.BitSize > 0 && f.BitOffset != 0 {
				diff("union-member-offset", label, "0", itoa(f.Offset))
			}
		case f.BitSize > 0:
			if pm.BitSize != f.BitSize {
				diff("bitfield-width", label, itoa(pm.BitSize), itoa(f.BitSize))
			}
			if abs := pm.Off*8 + pm.Bit; abs != f.BitOffset {
				diff("bitfield-bit-offset", label, itoa(abs), itoa(f.BitOffset))
			}
		case pm.Off != f.Offset:
			diff("member-offset", label, itoa(pm.Off), itoa(f.Offset))
		}
	}
}

// TestGdbAgreePlanted: the gdb comparison agrees on agree.c and catches a
// planted member offset.
func TestGdbAgreePlanted(t *testing.T) {
	if _, err := exec.LookPath("gdb"); err != nil {
		t.Skipf("skipping: gdb not found (install the Debian package gdb): %v", err)
	}
	dir := t.TempDir()
	o := compiled(t, dir, "agree.c", "c.o", "-g", "-O0")
	d := openDebugT(t, o)
	g, err := d.AllTypes(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	byLocal := modelAggregates(g)
	gs, err := runGdbPtype(context.Background(), o, "", gdbNames(byLocal), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	st := agreeGdb(byLocal, o, gs)
	if st.Structs < 8 || len(st.Diffs) != 0 {
		t.Fatalf("%d structs compared, disagreements %v", st.Structs, st.Diffs)
	}
	for i := range gs {
		if gs[i].Name == "fptrs" {
			gs[i].Members[2].Off++
		}
	}
	st = agreeGdb(byLocal, o, gs)
	if len(st.Diffs) != 1 || st.Diffs[0].Class != "gdb/member-offset" {
		t.Fatalf("planted: %v", st.Diffs)
	}
}
