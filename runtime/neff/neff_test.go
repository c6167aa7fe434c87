package neff

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/collectives"
	"github.com/nrtabi/nrtabi/runtime/device"
	"github.com/nrtabi/nrtabi/runtime/transport/inproc"
)

// example is the page's example (docs/neff-replica-groups.md#example).
const example = `# a NEFF of 8 ranks: two tensor-parallel halves, one all-rank send/recv
# group, and two all-reduces over the world bootstrapped per half
nrtabi-neff-replica-groups 1
world 8
group 0 collective {{0,1,2,3},{4,5,6,7}}
group 1 sendrecv {{0,1,2,3,4,5,6,7}}
group 2 collective {{0,1,2,3,4,5,6,7}} bootstrap {{0,1,2,3},{4,5,6,7}}
group 3 collective {{0,1,2,3,4,5,6,7}} bootstrap {{3,2,1,0},{7,6,5,4}}
`

func TestParseFor(t *testing.T) {
	s, err := Parse("example", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	if s.World != 8 || len(s.Groups) != 4 {
		t.Fatalf("world %d, %d groups", s.World, len(s.Groups))
	}
	all := []uint32{0, 1, 2, 3, 4, 5, 6, 7}
	rg := func(rank, rankN, id int, parts, boot []uint32, brank int) collectives.ReplicaGroup {
		return collectives.ReplicaGroup{Rank: rank, RankN: rankN, GroupID: id, SrcTargetPairsID: -1,
			Participants: parts, BootstrapParticipants: boot, BootstrapRank: brank}
	}
	want := map[uint32][]collectives.ReplicaGroup{
		1: {
			rg(1, 4, 0, []uint32{0, 1, 2, 3}, []uint32{0, 1, 2, 3}, 1),
			rg(abi.EncRgSendrecvRank, 8, 1, all, all, 1),
			rg(1, 4, 2, all, []uint32{0, 1, 2, 3}, 1),
			rg(1, 4, 3, all, []uint32{3, 2, 1, 0}, 2),
		},
		6: {
			rg(2, 4, 0, []uint32{4, 5, 6, 7}, []uint32{4, 5, 6, 7}, 2),
			rg(abi.EncRgSendrecvRank, 8, 1, all, all, 6),
			rg(6, 4, 2, all, []uint32{4, 5, 6, 7}, 2),
			rg(6, 4, 3, all, []uint32{7, 6, 5, 4}, 1),
		},
	}
	for gid, w := range want {
		got, err := s.For(gid)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("rank %d:\n got %+v\nwant %+v", gid, got, w)
		}
	}
	// The records are copies: a caller writing one cannot change the set.
	got, _ := s.For(1)
	got[0].Participants[0] = 99
	if again, _ := s.For(1); again[0].Participants[0] != 0 {
		t.Error("For hands out the set's own slices")
	}
	if _, err := s.For(8); err == nil || !strings.Contains(err.Error(), "not in the world of 8") {
		t.Errorf("For(8) on a world of 8: %v", err)
	}
	// A rank outside every set of a group gets no record for it.
	s2, err := Parse("sub", []byte("nrtabi-neff-replica-groups 1\nworld 4\ngroup 5 collective {{0,1}}\ngroup 6 collective {{2,3},{0}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ = s2.For(3)
	if len(got) != 1 || got[0].GroupID != 6 || got[0].Rank != 1 {
		t.Errorf("rank 3 of a sub-world: %+v", got)
	}
}

// TestParsePlantedFaults plants one fault per line kind and sees each
// refused in one line naming the file, the line and the field.
func TestParsePlantedFaults(t *testing.T) {
	const head = "nrtabi-neff-replica-groups 1\nworld 4\n"
	cases := []struct {
		name, in, want string
	}{
		{"empty", "", "f: header: empty"},
		{"comments only", "# nothing\n\n", "f: header: empty"},
		{"not ours", "world 4\n", `f:1: header: the first statement is "world"`},
		{"version 2", "nrtabi-neff-replica-groups 2\n", "f:1: header: want"},
		{"no world", "nrtabi-neff-replica-groups 1\n", "f: world: missing"},
		{"group before world", "nrtabi-neff-replica-groups 1\ngroup 0 collective {{0}}\n", "f:2: group: comes before `world`"},
		{"world twice", head + "world 4\n", "f:3: world: given twice"},
		{"world zero", "nrtabi-neff-replica-groups 1\nworld 0\n", "f:2: world: \"0\" is not a world size"},
		{"world huge", "nrtabi-neff-replica-groups 1\nworld 99999999999\n", "is not a world size in 1..1048576"},
		{"world signed", "nrtabi-neff-replica-groups 1\nworld +4\n", "is not a world size"},
		{"no group", head, "f: group: no group declared"},
		{"unknown statement", head + "grop 0 collective {{0}}\n", `f:3: unknown statement "grop"`},
		{"group id 12", head + "group 12 collective {{0}}\n", "f:3: group id: \"12\" is not a group id in 0..11 (ENC_MAX_COMM_N = 12)"},
		{"group id negative", head + "group -1 collective {{0}}\n", "f:3: group id"},
		{"group id leading zero", head + "group 01 collective {{0}}\n", "f:3: group id"},
		{"group id twice", head + "group 1 collective {{0}}\ngroup 1 sendrecv {{1}}\n", "f:4: group id: group 1 is declared again (first on line 3)"},
		{"bad kind", head + "group 0 allreduce {{0}}\n", "f:3: kind: \"allreduce\""},
		{"blank inside sets", head + "group 0 collective {{0, 1}}\n", "f:3: group: 5 fields"},
		{"id past world", head + "group 0 collective {{0,4}}\n", "f:3: replica groups: set 0: \"4\" is not a global device id of the world of 4"},
		{"duplicate id", head + "group 0 collective {{0,1},{2,1}}\n", "f:3: replica groups: set 1: 1 is already in set 0"},
		{"duplicate in one set", head + "group 0 collective {{0,0}}\n", "already in set 0"},
		{"empty set", head + "group 0 collective {{0},{}}\n", "set 1 is empty"},
		{"empty id", head + "group 0 collective {{0,,1}}\n", `"" is not a global device id`},
		{"not nested", head + "group 0 collective {0,1}\n", "a set starts with {"},
		{"unclosed", head + "group 0 collective {{0,1}\n", "a set is not closed with }"},
		{"unclosed inner", head + "group 0 collective {{0,1\n", "is not {{ids}"},
		{"trailing comma", head + "group 0 collective {{0},}\n", "separated by one comma"},
		{"deeper nesting", head + "group 0 collective {{{0}}}\n", "sets are separated by one comma"},
		{"junk after sets", head + "group 0 collective {{0}} boot {{0}}\n", `f:3: group: "boot" after the replica groups`},
		{"bootstrap outside", head + "group 0 collective {{0,1}} bootstrap {{0,2}}\n", "f:3: bootstrap groups: bootstrap group 0 holds 2, which is in no replica group"},
		{"bootstrap across", head + "group 0 collective {{0,1},{2,3}} bootstrap {{0,2},{1,3}}\n", "bootstrap group 0 holds 0 and 2 of different replica groups"},
		{"bootstrap incomplete", head + "group 0 collective {{0,1}} bootstrap {{0}}\n", "participant 1 is in no bootstrap group"},
		{"bootstrap duplicate", head + "group 0 collective {{0,1}} bootstrap {{0},{0,1}}\n", "bootstrap groups: set 1: 0 is already in set 0"},
		{"control byte", head + "group 0 collective {{0}}\x1b[2J\n", "f:3: byte 0x1b"},
		{"control in comment", head + "# \x07\ngroup 0 collective {{0}}\n", "f:3: byte 0x07"},
		{"high byte", head + "group 0 collective {{0}} \xff\n", "byte 0xff"},
	}
	for _, c := range cases {
		s, err := Parse("f", []byte(c.in))
		if err == nil {
			t.Errorf("%s: accepted: %+v", c.name, s)
			continue
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: %T is not a *neff.Error", c.name, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) {
			t.Errorf("%s: %q, want it to say %q", c.name, msg, c.want)
		}
		if strings.ContainsAny(msg, "\n\r\x1b\x07") {
			t.Errorf("%s: the error is not one clean line: %q", c.name, msg)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "rg.txt")
	if err := os.WriteFile(good, []byte(example), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(good); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(big, []byte(example+strings.Repeat("#", MaxFileSize)), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		big:                            "larger than 4194304 bytes",
		fifo:                           "a FIFO, not a regular file",
		dir:                            "a directory, not a regular file",
		filepath.Join(dir, "missing"):  "cannot read the replica-group file",
		filepath.Join(dir, "bad\x1b]"): "\\x1b]",
	} {
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%q): %v, want %q", path, err, want)
		} else if strings.ContainsAny(err.Error(), "\n\x1b") {
			t.Errorf("Load(%q): the error carries a raw control byte: %q", path, err)
		}
	}
}

type ids struct{}

func (ids) CoreIdentity(vnc uint32) (device.Identity, error) {
	return device.Identity{NecDev: int(vnc), MLAIdx: int(vnc), HostDeviceID: int(vnc), VtpbIdx: vnc}, nil
}
func (ids) VirtualServerSize() uint32 { return 0 }

// TestGroupsFeedTheBootstrap hands every rank's parsed records to the
// collectives runtime of an in-process world of 8: each group bootstraps,
// and the groups whose bootstrap groups coincide share one comm node (the
// pool key is the bootstrap participants, docs/sources.md#s004-2-note), so
// group 2, bootstrapped per half, lands on group 0's nodes, while group 3
// (the same halves in another order: another key) and the world-wide
// group 1 get their own. Records built from participants instead of the
// bootstrap groups, or with rank_n from the wrong vector, fail here.
func TestGroupsFeedTheBootstrap(t *testing.T) {
	s, err := Parse("example", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	comms := &inproc.Comms{}
	rt, err := collectives.New(ids{}, comms, collectives.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	w, err := inproc.NewWorld(n, inproc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	each := func(f func(r int) error) {
		t.Helper()
		errs := make([]error, n)
		var wg sync.WaitGroup
		for r := 0; r < n; r++ {
			wg.Add(1)
			go func() { defer wg.Done(); errs[r] = f(r) }()
		}
		wg.Wait()
		for r, err := range errs {
			if err != nil {
				t.Fatalf("rank %d: %v", r, err)
			}
		}
	}
	for r := 0; r < n; r++ {
		if err := rt.InitGlobalComm(uint32(r), uint32(r), n, 0, "127.0.0.1:62182", true); err != nil {
			t.Fatal(err)
		}
	}
	each(func(r int) error { return rt.SetupGlobalComm(r, 0, w.Endpoint(r)) })

	recs := make([][]collectives.ReplicaGroup, n)
	for r := range recs {
		if recs[r], err = s.For(uint32(r)); err != nil {
			t.Fatal(err)
		}
	}
	nodes := make([][]*collectives.CommNode, n)
	for gi := range s.Groups {
		each(func(r int) error {
			node, err := rt.GetNcclComm(&recs[r][gi], r, 0, 0, false)
			nodes[r] = append(nodes[r], node)
			return err
		})
	}
	for r := 0; r < n; r++ {
		g0, g1, g2, g3 := nodes[r][0], nodes[r][1], nodes[r][2], nodes[r][3]
		if g0 != g2 {
			t.Errorf("rank %d: group 2 (bootstrap {0..3}/{4..7}) did not reuse group 0's comm node", r)
		}
		if g1 == g0 || g3 == g0 || g3 == g1 {
			t.Errorf("rank %d: groups of different bootstrap participants share a comm node", r)
		}
		if want := recs[r][0].BootstrapParticipants; string(g0.Key()) != string(u32le(want)) {
			t.Errorf("rank %d: pool key %x, want the image of %v", r, g0.Key(), want)
		}
	}
}

func u32le(v []uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
	}
	return b
}
