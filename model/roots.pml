/*
 * The multi-root bootstrap (docs/models.md#the-ring-of-roots): NRANKS ranks
 * split among R = roots_count(N, P) roots, root j serving the contiguous
 * ranks root_lo(j) .. root_hi(j) - 1 (P per root, the last range may be
 * short), as NCCL 2.23's ncclCommInitRankScalable splits a world among
 * several unique ids (docs/sources.md#ref-scale). The roots are joined by a
 * ring of their own.
 *
 *   1. every rank sends its INFO_TO_ROOT to its root; a root refuses a rank
 *      outside its range or one whose check fails (a skewed git hash);
 *   2. the roots ring-all-gather their summaries (R - 1 steps): each root
 *      learns every other root's range and first rank's address;
 *   3. each root answers its ranks with their ring successor: r + 1 inside
 *      its range, and for its last rank the first rank of the next root's
 *      range, an address it has only from step 2;
 *   4. the ranks wire one ring of N and ring-all-gather their records
 *      (bits of a mask; the bidirectional all-gather is bidi.pml's);
 *   5. each rank reports RING_DONE to its root; when all its ranks have, a
 *      root passes a done token round the roots' ring (R - 1 steps) and only
 *      then sends COMPLETE: no rank succeeds while another range can fail.
 *
 * Abort propagation (fast failure): a root that sees a failure (a rank's
 * ABORT or hang-up, a refused rank, an ABORT from the roots' ring) sends
 * ABORT to each of its ranks and to the next root, once; an ABORT
 * interrupts any wait of a rank or a root. So every rank of every range
 * ends within one pass of the roots' ring, R hops, rather than by the
 * socket timeout. (How long that takes is the simulator's and the bench's
 * question; Promela has no clock.)
 *
 * The range and ring formulas are the model's own (root_* below) until the
 * spec holds rows for them.
 *
 * Faults (-DFAULTS), at most one: a rank dies at any step point; a rank
 * connects to the wrong root (the next one); a rank's check fails.
 * -DVICTIM=v narrows them to rank v dying (a planted bug's smallest search).
 *
 * Properties:
 *   termination  every rank and every root ends (pan's invalid end states)
 *   ring         the successors form one ring of N: each rank accepts
 *                exactly the predecessor ring_prev(r, N)
 *   addresses    a rank connects only to the address its root sent; a root
 *                names a rank of another range only once it holds that
 *                range's summary
 *   gather       a rank that succeeds holds every record
 *   validity     no fault: every rank succeeds
 *   agreement    the live ranks of every range all succeed or all fail; a
 *                refused rank fails every rank
 *
 * Planted bugs (-D), each of which pan must reject:
 *   BUG_RANGE_NO_CLAMP       the last root expects P ranks even when its
 *                            range is short
 *   BUG_LAST_NEXT_OWN_FIRST  a root closes its range into a ring of its own
 *   BUG_ROOTS_RING_SHORT     the roots' all-gather stops one step early
 *   BUG_NO_ROOT_ABORT        a root aborts its own ranks but not the next root
 *   BUG_DONE_WITHOUT_ROOTS   a root sends COMPLETE once its own ranks are
 *                            done, without the roots' done round
 */
#include "zspec.pml"

#ifndef NRANKS
#define NRANKS 4
#endif
#ifndef PER_ROOT
#define PER_ROOT 2
#endif
#define N NRANKS
#define P PER_ROOT
#define NONE 255

#define roots_count(n, p) (((n) + (p) - 1) / (p))
#define R roots_count(N, P)
#define root_of(r, p) ((r) / (p))
#define root_lo(j, p) ((j) * (p))
#ifdef BUG_RANGE_NO_CLAMP
#define root_hi(j, n, p) (((j) + 1) * (p))
#else
#define root_hi(j, n, p) ((((j) + 1) * (p) < (n)) -> (((j) + 1) * (p)) : (n))
#endif

#define M_INFO_TO_ROOT BOOTSTRAP_MSG_INFO_TO_ROOT
#define M_INFO_FROM_ROOT BOOTSTRAP_MSG_INFO_FROM_ROOT
#define M_RING_DONE BOOTSTRAP_MSG_RING_DONE
#define M_COMPLETE BOOTSTRAP_MSG_COMPLETE
#define M_ABORT BOOTSTRAP_MSG_ABORT
#define M_HELLO BOOTSTRAP_MSG_HELLO
#define M_RING_DATA BOOTSTRAP_MSG_RING_DATA
#define M_CLOSED 0
#define M_DONE_TOKEN 100	/* the roots' done round */

#define RUNNING 0
#define SUCCEEDED 1
#define FAILED 2
#define DEAD 3

#define F_NONE 0
#define F_DIES 1
#define F_WRONG_ROOT 2
#define F_BAD_CHECK 3

#define ALL ((1 << N) - 1)

/* rank -> root j: sender, kind, ok (its check) */
chan toroot[R] = [4 * N] of { byte, byte, byte };
/* root -> rank: kind, successor */
chan fromroot[N] = [2] of { byte, byte };
/* into rank r's ring socket: kind, sender, records */
chan ring[N] = [N + 1] of { byte, byte, int };
/* into root j from the previous root: kind, records (roots' bits) */
chan rring[R] = [2 * R] of { byte, int };
/* into root j: an ABORT on the roots' ring */
chan rabort[R] = [2] of { byte };

byte victim = 255;
byte fault;
byte result[N];
byte ended;
byte roots_ended;

inline rank_close() {
	if
	:: succ != NONE -> ring[succ]!M_CLOSED, r, 0
	:: else
	fi;
	toroot[myroot]!r, M_CLOSED, 0
}

inline step_point() {
	if
	:: r == victim && fault == F_DIES ->
		atomic { rank_close(); res = DEAD; goto finish }
	:: true
	fi
}

inline fail() {
	if
	:: !aborted -> toroot[myroot]!r, M_ABORT, 0
	:: else
	fi;
	rank_close();
	res = FAILED;
	goto finish
}

#define RANK_RECV(want) \
	if \
	:: ring[r]?kind, from, v -> \
		if \
		:: kind != want -> fail() \
		:: else \
		fi \
	:: fromroot[r]?kind, _ -> assert(kind == M_ABORT); aborted = 1; fail() \
	fi

proctype Rank(byte r) {
	byte kind, from, succ = NONE, myroot, ok, i, res;
	int have, v;
	bool aborted;

	have = 1 << r;
	myroot = root_of(r, P);
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
	:: else -> assert(kind == M_ABORT); aborted = 1; succ = NONE; fail()
	fi;
	assert(succ < N);	/* addresses: its root named a rank of the world */

	/* 4. one ring of N: HELLO to the successor, accept the predecessor */
	step_point();
	ring[succ]!M_HELLO, r, 0;
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
		have = have | v;
		i++
	:: else -> break
	od;

	/* 5. RING_DONE, then COMPLETE */
	step_point();
	toroot[myroot]!r, M_RING_DONE, 0;
	step_point();
	fromroot[r]?kind, _;
	if
	:: kind == M_COMPLETE
	:: else -> assert(kind == M_ABORT); aborted = 1; fail()
	fi;
	assert(have == ALL);	/* gather */
	res = SUCCEEDED;
finish:
	atomic { result[r] = res; ended++ }
}

/* a root's wait that a rank's failure or the roots' ring's ABORT interrupts */
#define ROOT_ABORTABLE \
	:: rabort[j]?_ -> goto abort \
	:: toroot[j]?who, kind, ok -> goto abort

proctype Root(byte j) {
	byte who, kind, ok, lo, hi, have, done, i, nx, succ;
	int rknown, m;

	lo = root_lo(j, P);
	hi = root_hi(j, N, P);
	nx = (j + 1) % R;

	/* 1. gather and check its range */
	do
	:: have < hi - lo ->
		if
		:: toroot[j]?who, kind, ok ->
			if
			:: kind != M_INFO_TO_ROOT -> goto abort	/* a rank hung up or aborted */
			:: kind == M_INFO_TO_ROOT && (who < lo || who >= hi || !ok) -> goto abort	/* refused, by name */
			:: else -> have++
			fi
		:: rabort[j]?_ -> goto abort
		fi
	:: else -> break
	od;

	/* 2. the roots' ring all-gather of summaries */
	rknown = 1 << j;
	i = 0;
	do
#ifdef BUG_ROOTS_RING_SHORT
	:: i + 2 < R ->
#else
	:: i + 1 < R ->
#endif
		rring[nx]!M_RING_DATA, 1 << ((j + R - i) % R);
		if
		:: rring[j]?kind, m -> assert(kind == M_RING_DATA); rknown = rknown | m
		ROOT_ABORTABLE
		fi;
		i++
	:: else -> break
	od;

	/* 3. the replies: a successor inside the range, or the next range's first rank */
	i = lo;
	do
	:: i < hi ->
		if
		:: i + 1 < hi -> succ = i + 1
		:: else ->
#ifdef BUG_LAST_NEXT_OWN_FIRST
			succ = lo;
#else
			/* addresses: the next range's first rank, known from step 2 */
			assert((rknown & (1 << nx)) != 0);
			succ = root_lo(nx, P);
#endif
		fi;
		fromroot[i]!M_INFO_FROM_ROOT, succ;
		i++
	:: else -> break
	od;

	/* 5. its ranks' RING_DONE, the roots' done round, COMPLETE */
	do
	:: done < hi - lo ->
		if
		:: toroot[j]?who, kind, ok ->
			if
			:: kind == M_RING_DONE -> done++
			:: else -> goto abort
			fi
		:: rabort[j]?_ -> goto abort
		fi
	:: else -> break
	od;
#ifndef BUG_DONE_WITHOUT_ROOTS
	i = 0;
	do
	:: i + 1 < R ->
		rring[nx]!M_DONE_TOKEN, 0;
		/* Its token sent, a root no longer aborts on its own ranks: each
		 * has reported RING_DONE, so one that hangs up now has done its
		 * part (a dead rank, as the flat root's after its last RING_DONE).
		 * Only an ABORT from the ring still ends it: an abort starts only
		 * at a root that has not sent its token, so no root can have
		 * gathered every token and sent COMPLETE. */
		do
		:: rring[j]?kind, m -> assert(kind == M_DONE_TOKEN); break
		:: rabort[j]?_ -> goto abort
		:: toroot[j]?who, kind, ok
		od;
		i++
	:: else -> break
	od;
#endif
	i = lo;
	do
	:: i < hi -> fromroot[i]!M_COMPLETE, 0; i++
	:: else -> break
	od;
	goto out;
abort:
	i = lo;
	do
	:: i < hi -> fromroot[i]!M_ABORT, 0; i++
	:: else -> break
	od;
#ifndef BUG_NO_ROOT_ABORT
	if
	:: R > 1 -> rabort[nx]!j
	:: else
	fi;
#endif
out:
	roots_ended++
}

init {
	byte i, first;
#ifdef FAULTS
#ifdef VICTIM
	/* one given rank dying, no other fault: a bug's smallest counterexample */
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
