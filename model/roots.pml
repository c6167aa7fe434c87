/*
 * The multi-root bootstrap and fast failure (docs/models.md#the-ring-of-roots;
 * the wire: docs/bootstrap-hierarchy.md, "Wire at scale"). NRANKS ranks of a
 * flat world split among ROOTS roots in contiguous ranges, as NCCL 2.23's
 * ncclCommInitRankScalable splits a world among several unique ids
 * (docs/sources.md#ref-scale): with q = N / R and m = N % R, root i serves
 * root_cnt(i) = q + (i < m) ranks from root_lo(i) = i q + min(i, m).
 *
 * The roots are joined by a ring of their own. Root i:
 *   1. dials root i + 1 and sends its range (root 0: then the cluster id);
 *   2. takes its ranks' INFO_TO_ROOT (refusing one outside its range or
 *      failing its check) and the previous root's range (checked against
 *      the rule);
 *   3. sends the previous root the address of its first rank (first);
 *   4. reads the next root's first: the successor of its own last rank;
 *   5. reads the cluster id from the previous root and forwards it (root 0
 *      reads its own back, after 4: the ring is closed);
 *   6. answers each rank with its ring successor: r + 1 inside the range,
 *      the next range's first rank for its last.
 * The ranks then wire one ring of N and all-gather (bits of a mask; the
 * bidirectional all-gather is bidi.pml's). The default framing: no COMPLETE
 * round, so the live ranks need not agree when a rank dies mid-gather (as
 * flat.pml's default mode); a refused rank must still fail them all.
 *
 * Fast failure: a root that fails closes its ranks' connections and both
 * roots' ring connections, so each neighbour root fails when it next reads
 * the ring; a rank that sees a ring link go, or fails a step, sends an
 * abort frame on every ring link it has, both directions, and a rank waits
 * on every link it has at once. Nothing here waits for the socket timeout:
 * the model has none, so a wait that only the timeout would end is an
 * invalid end state. How long the abort takes to cross the world (hops) is
 * the simulator's question (bench/bootsim); Promela has no clock.
 *
 * The range and ring formulas are the model's own (root_* below): the spec
 * holds the records, not these as rows.
 *
 * Faults (-DFAULTS), at most one: a rank dies at any step point; a rank
 * connects to the wrong root (the next one); a rank fails its check
 * (a skewed git hash). -DVICTIM=v narrows them to rank v dying (a planted
 * bug's smallest search).
 *
 * Properties:
 *   termination  every rank and every root ends, none by a timeout
 *   ring         the successors form one ring of N: each rank accepts
 *                exactly ring_prev(r, N)
 *   addresses    a rank connects only to the address its root sent; a root
 *                names the next range's first rank only once that root sent
 *                it (first), and checks the previous root's range
 *   gather       a rank that succeeds holds every record
 *   validity     no fault: every rank succeeds
 *   refusal      a refused rank (wrong root, failed check) fails every rank
 *
 * Planted bugs (-D), each of which pan must reject:
 *   BUG_SPLIT_FLOOR          a root serves q ranks from i q, dropping the
 *                            remainder the rank side assigns
 *   BUG_LAST_NEXT_OWN_FIRST  a root closes its range into a ring of its own
 *   BUG_REPLY_BEFORE_FIRST   a root answers its ranks before the next root's
 *                            first has come
 *   BUG_NO_ROOT_CLOSE        a failing root closes its ranks, not the roots'
 *                            ring connections
 *   BUG_READ_ONE_LINK        a rank waits only on the link its step reads
 */
#include "zspec.pml"

#ifndef NRANKS
#define NRANKS 3
#endif
#ifndef ROOTS
#define ROOTS 2
#endif
#define N NRANKS
#define R ROOTS
#define NONE 255

#define root_q (N / R)
#define root_m (N % R)
#define root_min(a, b) (((a) < (b)) -> (a) : (b))
#define root_lo_rule(i) ((i) * root_q + root_min(i, root_m))
#define root_cnt_rule(i) (root_q + ((i) < root_m))
#ifdef BUG_SPLIT_FLOOR
#define root_lo(i) ((i) * root_q)
#define root_cnt(i) (((i) == R - 1) -> (N - (i) * root_q) : root_q)
#else
#define root_lo(i) root_lo_rule(i)
#define root_cnt(i) root_cnt_rule(i)
#endif
/* the rank side: the root whose range holds r (the first m ranges are q + 1 long) */
#define root_of(r) (((r) < root_m * (root_q + 1)) -> ((r) / (root_q + 1)) : (root_m + ((r) - root_m * (root_q + 1)) / root_q))

#define M_INFO_TO_ROOT BOOTSTRAP_MSG_INFO_TO_ROOT
#define M_INFO_FROM_ROOT BOOTSTRAP_MSG_INFO_FROM_ROOT
#define M_ABORT BOOTSTRAP_MSG_ABORT
#define M_HELLO BOOTSTRAP_MSG_HELLO
#define M_RING_DATA BOOTSTRAP_MSG_RING_DATA
#define M_CLOSED 0
#define M_RANGE 101	/* bootstrap_root_range */
#define M_FIRST 102	/* bootstrap_root_first */
#define M_CLUSTER 103	/* bootstrap_root_cluster */

#define RUNNING 0
#define SUCCEEDED 1
#define FAILED 2
#define DEAD 3

#define F_NONE 0
#define F_DIES 1
#define F_WRONG_ROOT 2
#define F_BAD_CHECK 3

#define ALL ((1 << N) - 1)

/* rank -> root i: sender, kind, ok (its check) */
chan toroot[R] = [2 * N] of { byte, byte, byte };
/* root -> rank: kind, successor */
chan fromroot[N] = [2] of { byte, byte };
/* into rank r from its predecessor: kind, sender, records; from its successor: kind */
chan ring[N] = [N + 2] of { byte, byte, int };
chan back[N] = [2] of { byte };
/* into root i from root i - 1 (range, cluster) and from root i + 1 (first): kind, value */
chan fwd[R] = [3] of { byte, byte };
chan bwd[R] = [2] of { byte, byte };

bool gone[N];	/* a rank that failed or died: a dial to it is refused */
byte victim = 255;
byte fault;
byte result[N];
byte ended;

/* A rank that fails sends an abort frame on each ring link it has; a dead
 * one's links close (the kernel's FIN). Both end a neighbour's wait. The
 * predecessor hears of it whether or not the rank accepted it yet: its
 * connection, accepted or still in the listen queue, is reset, and a dial
 * after that is refused. */
inline rank_links(kind) {
	if
	:: dialed -> ring[succ]!kind, r, 0
	:: else
	fi;
	back[ring_prev(r, N)]!kind
}

inline step_point() {
	if
	:: r == victim && fault == F_DIES ->
		atomic { gone[r] = 1; rank_links(M_CLOSED); toroot[myroot]!r, M_CLOSED, 0; res = DEAD; goto finish }
	:: true
	fi
}

inline fail() {
	atomic { gone[r] = 1; rank_links(M_ABORT); res = FAILED; goto finish }
}

/* A ring receive from the predecessor; a frame from the successor (its abort
 * or its hang-up) ends it too, unless the rank reads one link at a time. */
#ifdef BUG_READ_ONE_LINK
#define RANK_RECV(want) \
	ring[r]?kind, from, v; \
	if \
	:: kind != want -> fail() \
	:: else \
	fi
#else
#define RANK_RECV(want) \
	if \
	:: ring[r]?kind, from, v -> \
		if \
		:: kind != want -> fail() \
		:: else \
		fi \
	:: back[r]?kind -> fail() \
	fi
#endif

proctype Rank(byte r) {
	byte kind, from, succ = NONE, myroot, ok, i, res;
	int have, v;
	bool dialed;

	have = 1 << r;
	myroot = root_of(r);
	ok = 1;
	if
	:: r == victim && fault == F_WRONG_ROOT -> myroot = (myroot + 1) % R
	:: r == victim && fault == F_BAD_CHECK -> ok = 0
	:: else
	fi;
	step_point();
	toroot[myroot]!r, M_INFO_TO_ROOT, ok;
	step_point();
	fromroot[r]?kind, succ;
	if
	:: kind == M_INFO_FROM_ROOT
	:: else -> succ = NONE; fail()	/* the root closed the connection */
	fi;
	assert(succ < N);	/* addresses: its root named a rank of the world */

	/* one ring of N: dial the successor, accept the predecessor */
	step_point();
	if
	:: atomic { !gone[succ] -> ring[succ]!M_HELLO, r, 0; dialed = 1 }
	:: gone[succ] -> fail()	/* the dial is refused */
	fi;
	step_point();
	RANK_RECV(M_HELLO);
	assert(from == ring_prev(r, N));	/* ring: the successors form one ring */
	i = 0;
	do
	:: i < ring_steps(N) ->
		assert(have & (1 << ring_send_slice(r, i, N)));
		step_point();
		ring[succ]!M_RING_DATA, r, 1 << ring_send_slice(r, i, N);
		step_point();
		RANK_RECV(M_RING_DATA);
		assert(v == 1 << ring_recv_slice(r, i, N));
		d_step { have = have | v; v = 0; i++ }
	:: else -> break
	od;
	assert(have == ALL);	/* gather */
	res = SUCCEEDED;
finish:
	atomic { result[r] = res; ended++ }
}

/* 6. the replies: a successor inside the range, the next range's first for the last */
inline replies() {
	i = lo;
	do
	:: i < lo + cnt ->
		if
		:: i + 1 < lo + cnt -> fromroot[i]!M_INFO_FROM_ROOT, i + 1
		:: else ->
#ifdef BUG_LAST_NEXT_OWN_FIRST
			fromroot[i]!M_INFO_FROM_ROOT, lo
#else
			/* addresses: the next range's first rank, from the next root */
			assert(knownfirst);
			fromroot[i]!M_INFO_FROM_ROOT, root_lo(nx)
#endif
		fi;
		i++
	:: else -> break
	od
}

/* the previous or the next root hung up: a wait on the ring ends with it */
#define RING_GONE (fwd[j]??[M_CLOSED, val] || bwd[j]??[M_CLOSED, val])

proctype Root(byte j) {
	byte who, kind, ok, lo, cnt, have, i, nx, pv, val;
	bool gotrange, knownfirst;

	lo = root_lo(j);
	cnt = root_cnt(j);
	nx = (j + 1) % R;
	pv = (j + R - 1) % R;

	/* 1. dial the next root: its range, root 0 then the cluster */
	if
	:: R > 1 ->
		fwd[nx]!M_RANGE, root_lo(j);
		if
		:: j == 0 -> fwd[nx]!M_CLUSTER, 0
		:: else
		fi
	:: else -> gotrange = 1
	fi;
	/* 2. its ranks and the previous root's range */
	do
	:: have < cnt || !gotrange ->
		if
		:: toroot[j]?who, kind, ok ->
			if
			:: kind != M_INFO_TO_ROOT -> goto abort	/* a rank hung up */
			:: kind == M_INFO_TO_ROOT && (who < lo || who >= lo + cnt || !ok) -> goto abort	/* refused, by name */
			:: else -> have++
			fi
		:: !gotrange && fwd[j]?[kind, val] ->
			fwd[j]?kind, val;
			if
			:: kind == M_RANGE && val == root_lo_rule(pv) -> gotrange = 1
			:: else -> goto abort	/* the previous root failed, or claims another range */
			fi
		:: RING_GONE -> goto abort
		fi
	:: else -> break
	od;
	if
	:: R > 1 ->
#ifdef BUG_REPLY_BEFORE_FIRST
		replies();
#endif
		/* 3. its first rank to the previous root; 4. the next root's first.
		 * While it waits on the roots' ring a root still takes what comes
		 * from ranks: a rank of another range that arrives after its own
		 * range is complete is refused now, not left to the socket timeout
		 * with its own root waiting for it (pan's counterexample when the
		 * root stopped reading its ranks after step 2). */
		bwd[pv]!M_FIRST, lo;
		if
		:: bwd[j]?kind, val ->
			if
			:: kind == M_FIRST -> assert(val == root_lo_rule(nx)); knownfirst = 1
			:: else -> goto abort
			fi
		:: fwd[j]??[M_CLOSED, val] -> goto abort
		:: toroot[j]?who, kind, ok -> goto abort	/* a stray rank, or one of its own hanging up */
		fi;
		/* 5. the cluster id round the roots' ring */
		if
		:: fwd[j]?kind, val ->
			if
			:: kind == M_CLUSTER
			:: else -> goto abort
			fi
		:: bwd[j]??[M_CLOSED, val] -> goto abort
		:: toroot[j]?who, kind, ok -> goto abort	/* a stray rank, or one of its own hanging up */
		fi;
		if
		:: j != 0 -> fwd[nx]!M_CLUSTER, 0
		:: else
		fi
	:: else -> knownfirst = 1
	fi;
#ifndef BUG_REPLY_BEFORE_FIRST
	replies();
#endif
	goto out;
abort:
	/* its ranks' connections close (one not yet made is refused alike) */
	i = lo;
	do
	:: i < lo + cnt -> fromroot[i]!M_CLOSED, 0; i++
	:: else -> break
	od;
	/* a rank of another range that came here is hung up on too */
	if
	:: victim != 255 && fault == F_WRONG_ROOT && root_of(victim) != j && (root_of(victim) + 1) % R == j ->
		fromroot[victim]!M_CLOSED, 0
	:: else
	fi;
#ifndef BUG_NO_ROOT_CLOSE
	if
	:: R > 1 -> fwd[nx]!M_CLOSED, 0; bwd[pv]!M_CLOSED, 0
	:: else
	fi;
#endif
out:
	skip
}

init {
	byte i, first;
#ifdef FAULTS
#ifdef VICTIM
	if
	:: skip
	:: victim = VICTIM; fault = F_DIES
	fi;
#else
	if
	:: skip
	:: select(i : 0 .. N - 1); victim = i;
		if
		:: fault = F_DIES
		:: R > 1 -> fault = F_WRONG_ROOT
		:: fault = F_BAD_CHECK
		fi
	fi;
#endif
#endif
	atomic {
		i = 0;
		do
		:: i < R -> run Root(i); i++
		:: else -> break
		od;
		i = 0;
		do
		:: i < N -> run Rank(i); i++
		:: else -> break
		od
	};
	ended == N;
	i = 0;
	do
	:: i < N ->
		assert(fault != F_NONE || result[i] == SUCCEEDED);	/* validity */
		assert(fault == F_NONE || fault == F_DIES || result[i] == FAILED);	/* refusal */
		i++
	:: else -> break
	od
}
