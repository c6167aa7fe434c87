package elfread

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// pahole (the dwarves package) is the independent reader the type graph is
// held to on real inputs: its own DWARF reader (libdw) prints every named
// struct, class and union with each data member's byte offset and size in
// a trailing comment, and -I adds the DIE offset each came from. This file
// runs it, bounded, and parses what it prints.

// paholeStruct is one top-level struct, class or union pahole printed.
type paholeStruct struct {
	Kind, Name string
	// Off is the DIE offset -I printed (<hex>), in the .debug_info of the
	// file holding the DIE: the input's, or its dwz supplement's.
	Off    uint64
	HasOff bool
	// Size is the "size: N" of pahole's summary (it prints none for a
	// union).
	Size    int64
	HasSize bool
	Members []paholeMember
	Statics int // static members pahole printed as members (paholeMember.Static), left out of Members
	Line    int // where it starts in pahole's output
}

// paholeMember is one data member or base class line: one with an
// "offset size" comment at the struct's own level.
type paholeMember struct {
	Decl string // what pahole printed before the comment ("unsigned int b:3")
	Name string // the declarator's name; a base class's type name
	Base bool   // an "<ancestor>" line
	// Off is the byte offset; for a bitfield pahole prints "byte:bit",
	// the byte of the storage unit of the member's type's size and the bit
	// in it (Bit).
	Off, Bit int64
	IsBit    bool
	BitSize  int64 // the width after ':' in Decl
	Size     int64 // the byte size of the member's type (of the array)
	// Unknown: pahole printed "<ERROR(...): N not found!>" in the
	// member's place (a type it does not know, DW_TAG_atomic_type in
	// 1.24): the member is there, its position is not.
	Unknown bool
	// Static: a static data member, which pahole 1.24 prints with an
	// offset comment ("0 0") when the DWARF is version 4 (a DW_TAG_member
	// there; a DW_TAG_variable in DWARF 5): it takes no room.
	Static bool
}

var (
	// "<1e> /tmp/a.c:1" after "/* ", as -I prints it.
	paholeDieRe = regexp.MustCompile(`^/\* <([0-9a-f]+)> `)
	// The header of a top-level aggregate.
	paholeHeadRe = regexp.MustCompile(`^(struct|union|class) (.*?)(?: : .*)? \{$`)
	// A member line: the declaration, then "/* off size */" or
	// "/* off: bit size */".
	paholeMemberRe = regexp.MustCompile(`^(.*?);\s*/\*\s*(\d+)(?::\s*(\d+))?\s+(\d+)\s*\*/\s*$`)
	// A base class: "/* struct base <ancestor>; */ /* 0 16 */".
	paholeBaseRe = regexp.MustCompile(`^/\*\s*(.*?)\s*<ancestor>;\s*\*/\s*/\*\s*(\d+)\s+(\d+)\s*\*/\s*$`)
	paholeSizeRe = regexp.MustCompile(`^/\* size: (\d+),`)
	paholeBitRe  = regexp.MustCompile(`:(\d+)$`)
	attrRe       = regexp.MustCompile(`\s*__attribute__\(\(.*?\)\)+`)
	ptrDeclRe    = regexp.MustCompile(`\([*&]+\s*(?:const\s+)?([A-Za-z_$][A-Za-z0-9_$.]*)\s*(?:\[[^\]]*\])*\)\s*[(\[]`)
	identRe      = regexp.MustCompile(`[A-Za-z_$][A-Za-z0-9_$.]*`)
)

// maxPaholeOutput bounds what is kept of one pahole run.
const maxPaholeOutput = 1 << 30

// errNoPahole: pahole is not installed.
var errNoPahole = errors.New("pahole not found (install the Debian package dwarves)")

// capped is a writer that keeps at most max bytes and remembers it had
// to stop; with drop it swallows the rest (pahole's stderr, which the
// test only logs) instead of failing the child's write.
type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
	drop bool
}

func (c *capped) Write(p []byte) (int, error) {
	if c.buf.Len()+len(p) > c.max {
		c.over = true
		if c.drop {
			c.buf.Write(p[:max(0, c.max-c.buf.Len())])
			return len(p), nil
		}
		return 0, errors.New("output limit reached")
	}
	return c.buf.Write(p)
}

// runPahole runs pahole -I on path within timeout and parses its output.
// What it writes to stderr (tags it does not support) is returned for the
// log.
func runPahole(ctx context.Context, path string, timeout time.Duration, args ...string) ([]paholeStruct, string, error) {
	bin, err := exec.LookPath("pahole")
	if err != nil {
		return nil, "", errNoPahole
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(append([]string{"-I"}, args...), path)...)
	out := &capped{max: maxPaholeOutput}
	errOut := &capped{max: 1 << 16, drop: true}
	cmd.Stdout, cmd.Stderr = out, errOut
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		return nil, "", fmt.Errorf("pahole -I %s: no answer in %v", path, timeout)
	}
	if out.over {
		return nil, "", fmt.Errorf("pahole -I %s: more than %d bytes of output", path, out.max)
	}
	if err != nil {
		return nil, "", fmt.Errorf("pahole -I %s: %v\n%s", path, err, errOut.buf.String())
	}
	ps, err := parsePahole(&out.buf)
	return ps, errOut.buf.String(), err
}

// parsePahole reads pahole's C-like output: top-level aggregates, their
// members at depth one (the closing line of an anonymous struct or union
// member included; a nested type's definition, a method or a static
// member has no offset comment and is not a member).
func parsePahole(r io.Reader) ([]paholeStruct, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	var out []paholeStruct
	var cur *paholeStruct
	var die uint64
	hasDie := false
	depth, line := 0, 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if depth == 0 {
			if m := paholeDieRe.FindStringSubmatch(s); m != nil {
				v, err := strconv.ParseUint(m[1], 16, 64)
				if err != nil {
					return nil, fmt.Errorf("pahole line %d: DIE offset %q: %v", line, m[1], err)
				}
				die, hasDie = v, true
				continue
			}
			if m := paholeHeadRe.FindStringSubmatch(s); m != nil {
				out = append(out, paholeStruct{Kind: m[1], Name: m[2], Off: die, HasOff: hasDie, Line: line})
				cur = &out[len(out)-1]
				hasDie = false
				depth = 1
				continue
			}
			if strings.HasSuffix(s, "{") {
				// an enum or a typedef'd body (-a is not given): passed over
				cur = nil
				depth = 1
				hasDie = false
			}
			continue
		}
		opens := strings.HasSuffix(s, "{") && !strings.HasPrefix(s, "/*")
		// "} */" ends the comment a class's vtable is listed in
		// ("/* vtable has N entries: {"), not a body.
		closes := strings.HasPrefix(s, "}") && strings.TrimSpace(s[1:]) != "*/"
		if closes {
			depth--
		}
		if cur != nil {
			switch {
			case depth == 0:
				cur = nil
			case depth == 1 && !opens:
				if m := paholeBaseRe.FindStringSubmatch(s); m != nil {
					off, _ := strconv.ParseInt(m[2], 10, 64)
					size, _ := strconv.ParseInt(m[3], 10, 64)
					cur.Members = append(cur.Members, paholeMember{Decl: m[1], Name: baseTypeName(m[1]), Base: true, Off: off, Size: size})
				} else if m := paholeSizeRe.FindStringSubmatch(s); m != nil {
					cur.Size, _ = strconv.ParseInt(m[1], 10, 64)
					cur.HasSize = true
				} else if strings.HasPrefix(s, "<ERROR(") {
					cur.Members = append(cur.Members, paholeMember{Decl: s, Unknown: true})
				} else if !strings.HasPrefix(s, "/*") {
					if m := paholeMemberRe.FindStringSubmatch(s); m != nil {
						if pm := paholeMemberOf(m); pm.Static {
							cur.Statics++
						} else {
							cur.Members = append(cur.Members, pm)
						}
					}
				}
			}
		}
		if opens {
			depth++
			if depth > 1000 {
				return nil, fmt.Errorf("pahole line %d: nested deeper than 1000", line)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func paholeMemberOf(m []string) paholeMember {
	pm := paholeMember{Decl: strings.TrimSpace(m[1])}
	pm.Off, _ = strconv.ParseInt(m[2], 10, 64)
	if m[3] != "" {
		pm.IsBit = true
		pm.Bit, _ = strconv.ParseInt(m[3], 10, 64)
	}
	pm.Size, _ = strconv.ParseInt(m[4], 10, 64)
	d := attrRe.ReplaceAllString(pm.Decl, "")
	if b := paholeBitRe.FindStringSubmatch(d); b != nil {
		pm.BitSize, _ = strconv.ParseInt(b[1], 10, 64)
		d = strings.TrimSuffix(d, b[0])
	}
	pm.Name = declName(d)
	pm.Static = strings.HasPrefix(d, "static ")
	return pm
}

// declName is the name a C declarator declares: the identifier after the
// "(*" / "(&" of a function pointer, else the last identifier
// before any array bounds; "" for the closing "}" of an anonymous member.
func declName(d string) string {
	d = strings.TrimSpace(d)
	if strings.HasPrefix(d, "}") {
		d = strings.TrimSpace(strings.TrimPrefix(d, "}"))
	}
	// a C declarator "(*NAME)" or "(*NAME[N])"; Go's spelling
	// "func(*runtime.g, unsafe.Pointer) bool NAME" has "(*" before a type
	if m := ptrDeclRe.FindStringSubmatch(d); m != nil {
		return m[1]
	}
	for strings.HasSuffix(d, "]") {
		j := strings.LastIndex(d, "[")
		if j < 0 {
			break
		}
		d = strings.TrimSpace(d[:j])
	}
	ids := identRe.FindAllString(d, -1)
	if len(ids) == 0 {
		return ""
	}
	return ids[len(ids)-1]
}

// baseTypeName is a base class line's class name: the words after the
// kind, template arguments kept.
func baseTypeName(s string) string {
	for _, k := range []string{"struct ", "class ", "union "} {
		s = strings.TrimPrefix(s, k)
	}
	return strings.TrimSpace(s)
}

// bareName is a qualified C++ name's last component, template arguments
// kept ("std::vector<int, std::allocator<int> >" -> "vector<int, ...>").
func bareName(s string) string {
	depth := 0
	last := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<', '(':
			depth++
		case '>', ')':
			depth--
		case ':':
			if depth == 0 && i+1 < len(s) && s[i+1] == ':' {
				last = i + 2
				i++
			}
		}
	}
	return s[last:]
}

// sortedKeys lists a count map's keys, the largest count first.
func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}
