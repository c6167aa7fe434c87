// Package neff reads the replica-group set of a NEFF and gives each rank its
// enc_replica_group_info records as runtime/collectives consumes them: the
// participants (the logical membership), the bootstrap participants (the
// comm-pool key and the ranks that bootstrap together), the bootstrap rank,
// rank_n and the send/recv marker. The shipped NEFF carries the set as a
// binary kbin_replica_group_set_t that no source describes; this package
// reads nrtabi's text form of the same set, defined in
// docs/neff-replica-groups.md (spec row contradiction neff-replica-groups).
package neff

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/esc"
	"github.com/nrtabi/nrtabi/internal/regfile"
	"github.com/nrtabi/nrtabi/runtime/collectives"
)

// Bounds of the text form (docs/neff-replica-groups.md#limits). They are
// nrtabi's, not libnrt's: a file past them is refused, not truncated.
const (
	// Magic is the first statement of every file, followed by Version.
	Magic   = "nrtabi-neff-replica-groups"
	Version = 1
	// MaxFileSize bounds a file; every allocation of a parse is bounded by
	// the bytes read.
	MaxFileSize = 4 << 20
	// MaxWorld bounds the declared world size (g_device_cnt is a u32; a
	// world past this is taken as garbage).
	MaxWorld = 1 << 20
	// maxToken bounds one whitespace-separated token of an error message.
	maxToken = 64
)

// Kind is what a group is for.
type Kind int

const (
	// Collective groups: each member's rank is its index in participants.
	Collective Kind = iota
	// SendRecv groups carry rank ENC_RG_SENDRECV_RANK (-1); only they get
	// an inner op-signature (docs/sources.md#s004-4).
	SendRecv
)

func (k Kind) String() string {
	if k == SendRecv {
		return "sendrecv"
	}
	return "collective"
}

// Group is one `group` statement: the replica groups of one group id (a
// partition of some global device ids, in the order written) and the
// bootstrap groups that split them (the replica groups themselves when the
// statement has no `bootstrap`).
type Group struct {
	ID        int
	Kind      Kind
	Replica   [][]uint32
	Bootstrap [][]uint32
	Line      int
}

// Set is one file: the NEFF's world size and its groups in file order.
type Set struct {
	Name   string // the file name, for errors
	World  int
	Groups []Group
}

// Error is one refusal, naming the file, the line, the field and the fix.
type Error struct {
	File  string
	Line  int // 0: the file as a whole
	Field string
	Msg   string
	Err   error // the underlying error, if any
}

func (e *Error) Error() string {
	where := esc.String(e.File)
	if e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
	}
	if e.Field != "" {
		where += ": " + e.Field
	}
	return where + ": " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// Load reads and parses the regular file at path (at most MaxFileSize bytes).
func Load(path string) (*Set, error) {
	data, err := regfile.ReadFile(path, MaxFileSize)
	if err != nil {
		var nr *regfile.NotRegularError
		var tl *regfile.TooLargeError
		switch {
		case errors.As(err, &nr):
			return nil, &Error{File: path, Msg: nr.What() + "; give the replica-group file itself", Err: err}
		case errors.As(err, &tl):
			return nil, &Error{File: path, Msg: fmt.Sprintf("larger than %d bytes, the bound of a replica-group file", MaxFileSize), Err: err}
		}
		// The path is in File, escaped; the raw one in a *fs.PathError is not repeated.
		why := err.Error()
		var pe *fs.PathError
		if errors.As(err, &pe) {
			why = pe.Err.Error()
		}
		return nil, &Error{File: path, Msg: "cannot read the replica-group file: " + why, Err: err}
	}
	return Parse(path, data)
}

// tok quotes one token of the input for an error, escaped and bounded.
func tok(s string) string {
	if len(s) > maxToken {
		s = s[:maxToken] + "..."
	}
	return strconv.Quote(esc.String(s))
}

// Parse parses data as the replica-group file name.
func Parse(name string, data []byte) (*Set, error) {
	if len(data) > MaxFileSize {
		return nil, &Error{File: name, Msg: fmt.Sprintf("%d bytes is larger than %d, the bound of a replica-group file", len(data), MaxFileSize)}
	}
	s := &Set{Name: name}
	seenHeader, seenWorld := false, false
	ids := map[int]int{} // group id -> line
	line := 0
	for rest := data; len(rest) > 0; {
		line++
		var l []byte
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			l, rest = rest[:i], rest[i+1:]
		} else {
			l, rest = rest, nil
		}
		bad := func(field, format string, args ...any) error {
			return &Error{File: name, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
		}
		for _, c := range l {
			if c != '\t' && c != '\r' && (c < 0x20 || c >= 0x7f) {
				return nil, bad("", "byte %#02x: the file is printable ASCII (comments too)", c)
			}
		}
		if i := bytes.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		f := strings.Fields(string(l))
		if len(f) == 0 {
			continue
		}
		if !seenHeader {
			if f[0] != Magic {
				return nil, bad("header", "the first statement is %s, want %q %d: this is not a replica-group file", tok(f[0]), Magic, Version)
			}
			if len(f) != 2 || f[1] != strconv.Itoa(Version) {
				return nil, bad("header", "want %q %d exactly (this reader knows version %d only)", Magic, Version, Version)
			}
			seenHeader = true
			continue
		}
		switch f[0] {
		case "world":
			if seenWorld {
				return nil, bad("world", "given twice; a file has one world size")
			}
			if len(f) != 2 {
				return nil, bad("world", "want `world N` (the NEFF's world size)")
			}
			n, err := number(f[1], MaxWorld+1)
			if err != nil || n == 0 {
				return nil, bad("world", "%s is not a world size in 1..%d", tok(f[1]), MaxWorld)
			}
			s.World, seenWorld = n, true
		case "group":
			if !seenWorld {
				return nil, bad("group", "comes before `world`; declare the world size first")
			}
			g, err := parseGroup(f, s.World, line, bad)
			if err != nil {
				return nil, err
			}
			if prev, ok := ids[g.ID]; ok {
				return nil, bad("group id", "group %d is declared again (first on line %d); a group id names one replica-group set", g.ID, prev)
			}
			ids[g.ID] = line
			s.Groups = append(s.Groups, g)
		default:
			return nil, bad("", "unknown statement %s; a line is `world N` or `group ID KIND SETS [bootstrap SETS]`", tok(f[0]))
		}
	}
	switch {
	case !seenHeader:
		return nil, &Error{File: name, Field: "header", Msg: fmt.Sprintf("empty: a replica-group file starts with %q %d", Magic, Version)}
	case !seenWorld:
		return nil, &Error{File: name, Field: "world", Msg: "missing; declare `world N`"}
	case len(s.Groups) == 0:
		return nil, &Error{File: name, Field: "group", Msg: "no group declared; a NEFF without collectives needs no replica-group file"}
	}
	return s, nil
}

// parseGroup reads `group ID KIND SETS [bootstrap SETS]`.
func parseGroup(f []string, world, line int, bad func(field, format string, args ...any) error) (Group, error) {
	g := Group{Line: line}
	if len(f) != 4 && len(f) != 6 {
		return g, bad("group", "%d fields; want `group ID KIND SETS [bootstrap SETS]` with no blank inside SETS", len(f))
	}
	id, err := number(f[1], abi.EncMaxCommN)
	if err != nil {
		return g, bad("group id", "%s is not a group id in 0..%d (ENC_MAX_COMM_N = %d)", tok(f[1]), abi.EncMaxCommN-1, abi.EncMaxCommN)
	}
	g.ID = id
	switch f[2] {
	case "collective":
		g.Kind = Collective
	case "sendrecv":
		g.Kind = SendRecv
	default:
		return g, bad("kind", "%s; a group is `collective` or `sendrecv`", tok(f[2]))
	}
	owner := map[uint32]int{} // global device id -> index of its replica group
	g.Replica, err = parseSets(f[3], world, owner)
	if err != nil {
		return g, bad("replica groups", "%v", err)
	}
	if len(f) == 4 {
		g.Bootstrap = g.Replica
		return g, nil
	}
	if f[4] != "bootstrap" {
		return g, bad("group", "%s after the replica groups; only `bootstrap SETS` may follow", tok(f[4]))
	}
	inBoot := map[uint32]int{}
	g.Bootstrap, err = parseSets(f[5], world, inBoot)
	if err != nil {
		return g, bad("bootstrap groups", "%v", err)
	}
	// A bootstrap group is a per-level subgroup of one replica group, and
	// every participant bootstraps somewhere (docs/sources.md#s004-2-note).
	for bi, b := range g.Bootstrap {
		for _, id := range b {
			r, in := owner[id]
			if !in {
				return g, bad("bootstrap groups", "bootstrap group %d holds %d, which is in no replica group of group %d; bootstrap only participants", bi, id, g.ID)
			}
			if first := owner[b[0]]; r != first {
				return g, bad("bootstrap groups", "bootstrap group %d holds %d and %d of different replica groups; a bootstrap group lies inside one replica group", bi, b[0], id)
			}
		}
	}
	for id := range owner {
		if _, ok := inBoot[id]; !ok {
			return g, bad("bootstrap groups", "participant %d is in no bootstrap group; split every replica group completely", id)
		}
	}
	return g, nil
}

// parseSets reads {{a,b,...},{c,...},...}: ids < world, each at most once
// across the sets (recorded in seen as id -> set index), no set empty.
func parseSets(s string, world int, seen map[uint32]int) ([][]uint32, error) {
	if len(s) < 4 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, fmt.Errorf("%s is not {{ids},{ids},...}", tok(s))
	}
	var sets [][]uint32
	body := s[1 : len(s)-1]
	for len(body) > 0 {
		if body[0] != '{' {
			return nil, fmt.Errorf("%s: a set starts with {", tok(body))
		}
		end := strings.IndexByte(body, '}')
		if end < 0 {
			return nil, fmt.Errorf("%s: a set is not closed with }", tok(body))
		}
		inner := body[1:end]
		body = body[end+1:]
		if len(body) > 0 {
			if body[0] != ',' || len(body) == 1 {
				return nil, fmt.Errorf("%s: sets are separated by one comma", tok(body))
			}
			body = body[1:]
		}
		if inner == "" {
			return nil, fmt.Errorf("set %d is empty; a group has at least one member", len(sets))
		}
		var set []uint32
		for _, n := range strings.Split(inner, ",") {
			v, err := number(n, world)
			if err != nil {
				return nil, fmt.Errorf("set %d: %s is not a global device id of the world of %d", len(sets), tok(n), world)
			}
			id := uint32(v)
			if prev, dup := seen[id]; dup {
				return nil, fmt.Errorf("set %d: %d is already in set %d; the sets of one group are disjoint", len(sets), id, prev)
			}
			seen[id] = len(sets)
			set = append(set, id)
		}
		sets = append(sets, set)
	}
	return sets, nil
}

// number reads a decimal in 0..limit-1: digits only, no sign, no leading zero.
func number(s string, limit int) (int, error) {
	if s == "" || len(s) > 10 || (len(s) > 1 && s[0] == '0') {
		return 0, errors.New("not a number")
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errors.New("not a number")
		}
		n = n*10 + int(s[i]-'0')
	}
	if n >= limit {
		return 0, errors.New("out of range")
	}
	return n, nil
}

// For is what enc_parse_replica_groups leaves in enc_context.replica_groups
// for the rank whose global device id is gid: one record per group gid is a
// member of, in file order. Participants is gid's replica group, in the
// written order; BootstrapParticipants its bootstrap group (the pool key,
// docs/sources.md#s004-2-note) and BootstrapRank gid's index there; RankN is
// the bootstrap group's size, since get_nccl_comm sizes the key, the unique
// id and the comm by rank_n (docs/sources.md#s004-5). Rank is gid's index in
// Participants for a collective group, ENC_RG_SENDRECV_RANK for a send/recv
// one. Source-target pairs and ops are not in the file: SrcTargetPairsID is
// -1 and NumOps 0 for the caller to fill.
func (s *Set) For(gid uint32) ([]collectives.ReplicaGroup, error) {
	if int64(gid) >= int64(s.World) {
		return nil, &Error{File: s.Name, Field: "world", Msg: fmt.Sprintf("global device %d is not in the world of %d this file declares", gid, s.World)}
	}
	var out []collectives.ReplicaGroup
	for _, g := range s.Groups {
		parts, rank := find(g.Replica, gid)
		if parts == nil {
			continue
		}
		boot, brank := find(g.Bootstrap, gid)
		if boot == nil {
			// Parse refuses a participant outside every bootstrap group.
			return nil, &Error{File: s.Name, Line: g.Line, Field: "bootstrap groups", Msg: fmt.Sprintf("participant %d is in no bootstrap group", gid)}
		}
		if g.Kind == SendRecv {
			rank = abi.EncRgSendrecvRank
		}
		out = append(out, collectives.ReplicaGroup{
			Rank: rank, RankN: len(boot), GroupID: g.ID, SrcTargetPairsID: -1,
			Participants:          append([]uint32(nil), parts...),
			BootstrapParticipants: append([]uint32(nil), boot...),
			BootstrapRank:         brank,
		})
	}
	return out, nil
}

func find(sets [][]uint32, gid uint32) ([]uint32, int) {
	for _, set := range sets {
		for i, id := range set {
			if id == gid {
				return set, i
			}
		}
	}
	return nil, -1
}
