/*
 * The 2-tier hierarchical bootstrap over TCP (docs/bootstrap-hierarchy.md; docs/sources.md#s001-3,
 * the root-side dispatch; spec/<release>/bootstrap_hierarchy.toml): on a global
 * init of NRANKS ranks with PER_INSTANCE (L) ranks per instance the bootstrap is
 * hierarchical iff hier_dispatch(N, L); otherwise it is the flat ring, modelled
 * here as one instance of N ranks (the hierarchy with H = 1 is exactly the flat
 * ring: phase 1 alone, ring_steps(N) steps).
 *
 * The root gathers one INFO_TO_ROOT per rank (extInfoHier: per_instance and
 * instance) and refuses a rank whose per_instance differs from its L or whose
 * instance is not hier_instance(r, L); it answers each rank with
 * bootstrap_root_reply_hier: intra_next, inter_next (leaders only, NONE for a
 * non-leader), instance, ninstances, local_rank, local_n. The ranks then
 * all-gather their records (bits of a mask here, one per rank):
 *   1. intra ring: hier_intra_steps(k) steps inside the instance;
 *   2. inter ring: the leaders, hier_inter_steps(N, L) steps of whole
 *      instance blocks; a block must be exactly the expected instance's;
 *   3. down: the leader sends the other instances' records to its intra
 *      successor, each non-leader forwards them unless its successor is the
 *      leader: hier_down_hops(k) hops.
 * nrtabi's framing (flat.pml's EXTENDED): ranks stay connected to the root,
 * report RING_DONE and succeed on COMPLETE; a failure is reported as ABORT, the
 * root sends ABORT to every rank, and an ABORT interrupts any ring receive.
 *
 * Faults (-DFAULTS), at most one:
 *   a rank dies before any step (a leader dying mid-gather, a non-leader dying);
 *   a rank reports the wrong instance or the wrong per_instance (the root's
 *   refusal; a skewed git hash is refused the same way and not modelled apart).
 *
 * Properties:
 *   termination  every process ends (pan's invalid end states)
 *   gather       a rank that succeeds holds every rank's record; a rank only
 *                sends records it holds
 *   addresses    a rank connects only to an address the root sent it
 *                (assert(known ...)), and accepts only the predecessor the
 *                spec's formulas name
 *   validity     no fault: every rank succeeds
 *   agreement    the live ranks all succeed or all fail; a refused rank makes
 *                every rank fail
 *
 * Planted bugs (-D), each of which pan must reject:
 *   BUG_LEADER_TWICE     a leader sends its own block at every inter step
 *   BUG_NONLEADER_INTER  a non-leader joins the inter ring
 *   BUG_SPLIT_OFF_BY_ONE the root counts n / l instances, dropping a short last one
 *   BUG_INTRA_SLICE      phase 1 sends slice local + i, not local - i
 *   BUG_DOWN_SKIP_LAST   phase 3 stops one hop short of the last rank
 *   BUG_EVEN_LOCAL_N     the root tells a short last instance it has L ranks
 */
#include "zspec.pml"

#ifndef NRANKS
#define NRANKS 4
#endif
#ifndef PER_INSTANCE
#define PER_INSTANCE 2
#endif
#define N NRANKS
#define NONE 255

#define M_INFO_TO_ROOT BOOTSTRAP_MSG_INFO_TO_ROOT
#define M_INFO_FROM_ROOT BOOTSTRAP_MSG_INFO_FROM_ROOT
#define M_RING_DONE BOOTSTRAP_MSG_RING_DONE
#define M_COMPLETE BOOTSTRAP_MSG_COMPLETE
#define M_ABORT BOOTSTRAP_MSG_ABORT
#define M_HELLO BOOTSTRAP_MSG_HELLO
#define M_RING_DATA BOOTSTRAP_MSG_RING_DATA
#define M_CLOSED 0

#define RUNNING 0
#define SUCCEEDED 1
#define FAILED 2
#define DEAD 3

#define F_NONE 0
#define F_DIES 1
#define F_WRONG_INSTANCE 2
#define F_WRONG_PER_INSTANCE 3

#define ALL ((1 << N) - 1)
/* the records of instance j (its ranks' bits) in a world grouped by l */
#define block(j, l) ((((1 << hier_local_n((j) * (l), N, l)) - 1)) << ((j) * (l)))

/* rank -> root: sender, kind, per_instance, instance */
chan toroot = [3 * N] of { byte, byte, byte, byte };
/* root -> rank: kind, intra_next, inter_next, instance, ninstances, local_rank, local_n */
chan fromroot[N] = [2] of { byte, byte, byte, byte, byte, byte, byte };
/* into rank r's intra / inter ring socket: kind, sender, records */
chan intra[N] = [PER_INSTANCE + 2] of { byte, byte, int };
chan inter[N] = [N + 2] of { byte, byte, int };

byte L;	/* the ranks per instance in force: PER_INSTANCE, or N when flat */
byte victim = 255;
byte fault;
byte result[N];
byte ended;

/* A dead or failed rank's sockets close: the peers it was connected to see it. */
inline close_all() {
	if
	:: isucc != NONE -> intra[isucc]!M_CLOSED, r, 0
	:: else
	fi;
	if
	:: osucc != NONE -> inter[osucc]!M_CLOSED, r, 0
	:: else
	fi;
	toroot!r, M_CLOSED, 0, 0
}

inline step_point() {
	if
	:: r == victim && fault == F_DIES ->
		atomic { close_all(); res = DEAD; goto finish }
	:: true
	fi
}

inline fail() {
	if
	:: !aborted -> toroot!r, M_ABORT, 0, 0
	:: else
	fi;
	close_all();
	res = FAILED;
	goto finish
}

/* connect: only to an address the root sent */
inline connect_to(p) {
	assert(p != NONE && (known & (1 << p)) != 0)
}

/* A blocking receive on one of rank r's ring sockets; the root's ABORT interrupts it. */
#define RING_RECV(ch, want) \
	if \
	:: ch[r]?kind, from, v -> \
		if \
		:: kind != want -> fail() \
		:: else \
		fi \
	:: fromroot[r]?kind, _, _, _, _, _, _ -> assert(kind == M_ABORT); aborted = 1; fail() \
	fi
inline intra_recv(want) { RING_RECV(intra, want) }
inline inter_recv(want) { RING_RECV(inter, want) }

proctype Rank(byte r) {
	byte kind, from, isucc = NONE, osucc = NONE, inst, ninst, lrank, k, i, s, res, myl;
	byte pi, ri;
	int have, v, known;
	bool aborted;

	have = 1 << r;	/* its own record */
	myl = L;

	/* INFO_TO_ROOT (extInfoHier), then INFO_FROM_ROOT (bootstrap_root_reply_hier) */
	pi = myl;
	ri = hier_instance(r, myl);
	if
	:: r == victim && fault == F_WRONG_INSTANCE -> ri = ri + 1
	:: r == victim && fault == F_WRONG_PER_INSTANCE -> pi = myl + 1
	:: else
	fi;
	step_point();
	toroot!r, M_INFO_TO_ROOT, pi, ri;
	step_point();
	fromroot[r]?kind, isucc, osucc, inst, ninst, lrank, k;
	if
	:: kind == M_INFO_FROM_ROOT
	:: else -> assert(kind == M_ABORT); aborted = 1; isucc = NONE; osucc = NONE; fail()
	fi;
	/* a reply naming a rank outside the world is refused (the addresses property) */
	if
	:: isucc >= N || (osucc != NONE && osucc >= N) -> isucc = NONE; osucc = NONE; fail()
	:: else
	fi;
	known = 1 << isucc;
	if
	:: osucc != NONE -> known = known | (1 << osucc)
	:: else
	fi;

	/* 1. the intra ring: HELLO to the successor, accept the predecessor, k - 1 steps */
	if
	:: k > 1 ->
		connect_to(isucc);
		step_point();
		intra[isucc]!M_HELLO, r, 0;
		step_point();
		intra_recv(M_HELLO);
		assert(from == hier_intra_prev(r, myl, k));
		i = 0;
		do
		:: i < hier_intra_steps(k) ->
#ifdef BUG_INTRA_SLICE
			s = (lrank + i) % k;
#else
			s = hier_intra_send_slice(r, i, myl, k);
#endif
			assert(have & (1 << (hier_leader(r, myl) + s)));	/* gather: only records it holds */
			step_point();
			intra[isucc]!M_RING_DATA, r, 1 << (hier_leader(r, myl) + s);
			step_point();
			intra_recv(M_RING_DATA);
			assert(v == 1 << (hier_leader(r, myl) + hier_intra_recv_slice(r, i, myl, k)));
			have = have | v;
			i++
		:: else -> break
		od
	:: else
	fi;
	assert((have & block(inst, myl)) == block(inst, myl));	/* the instance block */

	/* 2. the inter ring of the leaders: whole instance blocks */
#ifdef BUG_NONLEADER_INTER
	if
	:: ninst > 1 ->
#else
	if
	:: lrank == 0 && ninst > 1 ->
#endif
		connect_to(osucc);
		step_point();
		inter[osucc]!M_HELLO, r, 0;
		step_point();
		inter_recv(M_HELLO);
		assert(from == hier_inter_prev(r, N, myl));
		i = 0;
		do
		:: i < ninst - 1 ->
#ifdef BUG_LEADER_TWICE
			s = inst;
#else
			s = hier_inter_send_block(r, i, N, myl);
#endif
			assert((have & block(s, myl)) == block(s, myl));
			step_point();
			inter[osucc]!M_RING_DATA, r, block(s, myl);
			step_point();
			inter_recv(M_RING_DATA);
			/* the block's length must be the expected instance's (uneven last) */
			if
			:: v != block(hier_inter_recv_block(r, i, N, myl), myl) -> fail()
			:: else
			fi;
			have = have | v;
			i++
		:: else -> break
		od
	:: else
	fi;

	/* 3. down the intra ring: the other instances' records, k - 1 hops */
	if
	:: ninst > 1 && k > 1 ->
		if
		:: lrank != 0 ->
			intra_recv(M_RING_DATA);
			assert(from == hier_intra_prev(r, myl, k));
			if
			:: v != (ALL & ~block(inst, myl)) -> fail()
			:: else
			fi;
			have = have | v
		:: else
		fi;
#ifdef BUG_DOWN_SKIP_LAST
		if
		:: lrank + 2 < k ->
#else
		if
		:: lrank + 1 < k ->
#endif
			assert((have & (ALL & ~block(inst, myl))) == (ALL & ~block(inst, myl)));
			step_point();
			intra[isucc]!M_RING_DATA, r, ALL & ~block(inst, myl)
		:: else
		fi
	:: else
	fi;

	/* RING_DONE, then wait for COMPLETE */
	step_point();
	toroot!r, M_RING_DONE, 0, 0;
	step_point();
	fromroot[r]?kind, _, _, _, _, _, _;
	if
	:: kind == M_COMPLETE
	:: else -> assert(kind == M_ABORT); aborted = 1; fail()
	fi;
	assert(have == ALL);	/* gather: every rank's record */
	res = SUCCEEDED;
finish:
	atomic { result[r] = res; ended++ }
}

/* Root.run: gather and check, reply, stay until every ring is done. */
proctype Root() {
	byte who, kind, pi, ri, have, done, i, k, ninst, inext, onext;

#ifdef BUG_SPLIT_OFF_BY_ONE
	ninst = N / L;
#else
	ninst = hier_ninstances(N, L);
#endif
	do
	:: have < N ->
		toroot?who, kind, pi, ri;
		if
		:: kind != M_INFO_TO_ROOT -> goto abort	/* a rank hung up or aborted */
		:: kind == M_INFO_TO_ROOT && (pi != L || ri != hier_instance(who, L)) -> goto abort	/* refused, by name */
		:: else -> have++
		fi
	:: else -> break
	od;
	i = 0;
	do
	:: i < N ->
#ifdef BUG_EVEN_LOCAL_N
		k = L;
#else
		k = hier_local_n(i, N, L);
#endif
		inext = hier_intra_next(i, L, k);
		onext = NONE;
		if
		:: hier_local(i, L) == 0 && ninst > 1 -> onext = ((hier_instance(i, L) + 1) % ninst) * L
		:: else
		fi;
		fromroot[i]!M_INFO_FROM_ROOT, inext, onext, hier_instance(i, L), ninst, hier_local(i, L), k;
		i++
	:: else -> break
	od;
	do
	:: done < N ->
		toroot?who, kind, _, _;
		if
		:: kind == M_RING_DONE -> done++
		:: else -> goto abort
		fi
	:: else -> break
	od;
	i = 0;
	do
	:: i < N -> fromroot[i]!M_COMPLETE, 0, 0, 0, 0, 0, 0; i++
	:: else -> break
	od;
	goto out;
abort:
	i = 0;
	do
	:: i < N -> fromroot[i]!M_ABORT, 0, 0, 0, 0, 0, 0; i++
	:: else -> break
	od;
out:
	skip
}

init {
	byte i, first;
	/* the dispatch: hierarchical iff the spec's condition holds, else one instance (flat) */
	if
	:: hier_dispatch(N, PER_INSTANCE) -> L = PER_INSTANCE
	:: else -> L = N
	fi;
	assert(L != N || hier_intra_steps(N) == ring_steps(N));	/* flat is the one-instance case */
#ifdef FAULTS
	if
	:: skip
	:: select(i : 0 .. N - 1); victim = i;
		if
		:: fault = F_DIES
		:: fault = F_WRONG_INSTANCE
		:: fault = F_WRONG_PER_INSTANCE
		fi
	fi;
#endif
	atomic {
		run Root();
		i = 0;
		do
		:: i < N -> run Rank(i); i++
		:: else -> break
		od
	};
	ended == N;
	first = DEAD;
	i = 0;
	do
	:: i < N ->
		assert(fault != F_NONE || result[i] == SUCCEEDED);	/* validity */
		assert(fault == F_NONE || fault == F_DIES || result[i] == FAILED);	/* a refused rank fails the world */
		if
		:: result[i] == DEAD
		:: first == DEAD -> first = result[i]
		:: else -> assert(result[i] == first)	/* agreement */
		fi;
		i++
	:: else -> break
	od
}
