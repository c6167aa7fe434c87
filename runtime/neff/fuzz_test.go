package neff

import (
	"errors"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// FuzzParse: any bytes either fail Parse with one clean *Error line, or give
// a set every rank of which gets records runtime/collectives accepts the
// shape of: group ids below ENC_MAX_COMM_N, rank_n the bootstrap group's
// size, the rank itself at its bootstrap rank and among its participants at
// its rank (or the send/recv marker), ids inside the declared world.
func FuzzParse(f *testing.F) {
	f.Add([]byte(example))
	f.Add([]byte("nrtabi-neff-replica-groups 1\nworld 4\ngroup 0 collective {{0,1},{2,3}} bootstrap {{1},{0},{3,2}}\n"))
	f.Add([]byte("nrtabi-neff-replica-groups 1\r\nworld 3\r\ngroup 11 sendrecv {{2,0,1}} # c\r\n"))
	f.Add([]byte("nrtabi-neff-replica-groups 1\nworld 2\ngroup 0 collective {{0,1},{0}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz", data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%T is not a *neff.Error: %v", err, err)
			}
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r\x1b") || !strings.HasPrefix(msg, "fuzz") {
				t.Fatalf("not one clean line naming the file: %q", msg)
			}
			return
		}
		if s.World < 1 || s.World > MaxWorld || len(s.Groups) == 0 {
			t.Fatalf("accepted world %d with %d groups", s.World, len(s.Groups))
		}
		n := min(s.World, 64)
		for gid := uint32(0); gid < uint32(n); gid++ {
			recs, err := s.For(gid)
			if err != nil {
				t.Fatalf("For(%d) of an accepted set: %v", gid, err)
			}
			for _, rg := range recs {
				if rg.GroupID < 0 || rg.GroupID >= abi.EncMaxCommN {
					t.Fatalf("group id %d", rg.GroupID)
				}
				if rg.RankN != len(rg.BootstrapParticipants) || rg.BootstrapRank < 0 || rg.BootstrapRank >= rg.RankN || rg.BootstrapParticipants[rg.BootstrapRank] != gid {
					t.Fatalf("rank %d: bootstrap rank %d of %v (rank_n %d)", gid, rg.BootstrapRank, rg.BootstrapParticipants, rg.RankN)
				}
				if rg.Rank != abi.EncRgSendrecvRank && (rg.Rank < 0 || rg.Rank >= len(rg.Participants) || rg.Participants[rg.Rank] != gid) {
					t.Fatalf("rank %d: rank %d of %v", gid, rg.Rank, rg.Participants)
				}
				seen := map[uint32]bool{}
				for _, p := range rg.Participants {
					if int(p) >= s.World || seen[p] {
						t.Fatalf("participants %v of world %d", rg.Participants, s.World)
					}
					seen[p] = true
				}
				for _, p := range rg.BootstrapParticipants {
					if !seen[p] {
						t.Fatalf("bootstrap participant %d is no participant of %v", p, rg.Participants)
					}
				}
			}
		}
	})
}
