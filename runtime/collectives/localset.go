package collectives

import (
	"sync"
	"sync/atomic"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// gidSet is a set of global device ids as a bitset: membership tests on the
// bootstrap path cost a shift and a mask, not a map lookup, which matters
// when every one of N in-process ranks scans an N-entry participant list.
type gidSet []uint64

func (s gidSet) has(id uint32) bool {
	w := int(id >> 6)
	return w < len(s) && s[w]&(1<<(id&63)) != 0
}

// with returns a copy of s with id added (or removed when on is false).
func (s gidSet) with(id uint32, on bool) gidSet {
	n := len(s)
	if w := int(id>>6) + 1; on && w > n {
		n = w
	}
	out := make(gidSet, n)
	copy(out, s)
	if int(id>>6) < n {
		if on {
			out[id>>6] |= 1 << (id & 63)
		} else {
			out[id>>6] &^= 1 << (id & 63)
		}
	}
	return out
}

// localSets tracks, per context, the global ids whose comms live in this
// process. Writers copy; readers load a snapshot without locking.
type localSets struct {
	mu   sync.Mutex
	sets [abi.EncdMaxContexts]atomic.Pointer[gidSet]
}

func (l *localSets) set(ctx int, id uint32, on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var cur gidSet
	if p := l.sets[ctx].Load(); p != nil {
		cur = *p
	}
	next := cur.with(id, on)
	l.sets[ctx].Store(&next)
}

func (l *localSets) snapshot(ctx int) gidSet {
	if p := l.sets[ctx].Load(); p != nil {
		return *p
	}
	return nil
}
