package hostile

import "time"

// Heartbeats is what a hostile root of the extended bootstrap framing
// sends in place of the answer a rank waits for (INFO_FROM_ROOT, or
// COMPLETE after RING_DONE): ROOT_WAIT heartbeats, Every apart, forever,
// whose "have" count is Have(i) for the i-th (of a world of Nranks). A
// count that never moves is the plain stall; one that moves (round and
// round, or up past the world) is a root that fakes progress, which a
// rule "wait while the count moves" would wait for without end. None may
// hold a rank past its total deadline (docs/bootstrap.md#bounds-and-tests).
type Heartbeats struct {
	Name   string
	Nranks uint32
	Every  time.Duration
	Have   func(i int) uint32
}

// HeartbeatRoots are the heartbeat patterns, for a world of two ranks.
func HeartbeatRoots() []Heartbeats {
	return []Heartbeats{
		{"still", 2, 200 * time.Millisecond, func(int) uint32 { return 1 }},
		{"round-and-round", 2, 200 * time.Millisecond, func(i int) uint32 { return uint32(i % 2) }},
		{"rising", 2, 100 * time.Millisecond, func(i int) uint32 { return uint32(i) }},
	}
}
