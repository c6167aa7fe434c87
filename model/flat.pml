/*
 * The flat bootstrap over TCP (docs/sources.md#s001-3, upstream NCCL 2.9;
 * runtime/transport/tcp flat.go, root.go, endpoint.go): a root gathers one
 * INFO_TO_ROOT per rank and answers INFO_FROM_ROOT (the ring successor);
 * every rank connects to its successor, accepts its predecessor and
 * all-gathers the listen addresses round the ring. NRANKS ranks; at most one
 * of them dies before any step. The root does not die.
 *
 * Two modes:
 *   default    upstream NCCL: a rank closes its root connection once it has
 *              its reply, and succeeds when its all-gather is done. A dead
 *              peer shows as a closed connection; an operation that nothing
 *              will ever complete ends by the socket timeout (Promela's
 *              timeout: taken only when no process can move).
 *   EXTENDED   nrtabi's extension (contradiction flat-root-lifetime): ranks
 *              stay connected to the root, report RING_DONE and succeed only
 *              on COMPLETE; a failure is reported to the root as ABORT (a
 *              dead rank's connection closes), the root sends ABORT to every
 *              rank, and an ABORT interrupts whatever a rank is blocked on.
 *              No timeouts: the ABORTs alone must end every rank.
 *
 * Properties:
 *   termination  every process ends (pan's invalid end states)
 *   gather       a rank that succeeds holds every rank's address, and only
 *                sends slices it holds (the spec's ring formulas)
 *   validity     no fault: every rank succeeds
 *   agreement    EXTENDED: the live ranks all succeed or all fail. In the
 *                default mode it does not hold (a rank dying in the
 *                all-gather lets its predecessor finish while its successor
 *                fails); -DCHECK_AGREEMENT asserts it there and pan shows
 *                the counterexample (a documented limit of upstream NCCL).
 *
 * Planted bugs (-D), each of which pan must reject:
 *   BUG_SHORT_GATHER    the all-gather stops one step early
 *   BUG_NO_PROPAGATE    EXTENDED: a rank neither hears the root's ABORT
 *                       while it wires the ring nor reports or hangs up when
 *                       it fails
 *   BUG_ROOT_KEEPS_ABORT EXTENDED: the root ends on a failure without telling
 *                       the ranks
 * BUG_SILENT_FAIL (a failing rank neither reports nor hangs up) is NOT a
 * planted bug: with one fault pan accepts it, since the root sees the dead
 * rank's own hang-up and aborts everyone (docs/models.md#what-spin-found).
 *   BUG_NO_COMPLETE     EXTENDED: a rank succeeds without waiting for COMPLETE
 */
#include "zspec.pml"

#ifndef NRANKS
#define NRANKS 3
#endif
#define N NRANKS

/* message kinds: the spec's types, plus a closed connection */
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

/* rank -> root: one connection per rank, read by the root as one stream of
 * events (root.go's session.events): sender, kind. */
chan toroot = [3 * N] of { byte, byte };
/* root -> rank r: kind, payload (the ring successor) */
chan fromroot[N] = [2] of { byte, byte };
/* rank r -> its ring successor: kind, payload (the sender, or a slice) */
chan ring[N] = [N + 1] of { byte, byte };

byte victim = 255;
byte result[N];
byte ended;

/* A dead or failed rank's sockets close. */
inline close_all() {
	ring[r]!M_CLOSED, r;
	toroot!r, M_CLOSED
}

inline step_point() {
	if
	:: r == vic ->
		atomic { close_all(); res = DEAD; goto finish }
	:: true
	fi
}

/* Endpoint.report / fail: tell the root (EXTENDED) and hang up. */
inline fail() {
#if !defined(BUG_SILENT_FAIL) && !defined(BUG_NO_PROPAGATE)
#ifdef EXTENDED
	if
	:: !aborted -> toroot!r, M_ABORT
	:: else
	fi;
#endif
	close_all();
#endif
	res = FAILED;
	goto finish
}

/* A blocking receive on the ring from the predecessor. EXTENDED: the root's
 * ABORT interrupts it (superviseRoot). Default: the socket timeout ends it
 * when nothing else can happen. */
inline ring_recv(want) {
	if
	:: ring[ring_prev(r, N)]?kind, v ->
		if
		:: kind != want -> fail()
		:: else
		fi
#if defined(EXTENDED) && !defined(BUG_NO_PROPAGATE)
	:: fromroot[r]?kind, v -> assert(kind == M_ABORT); aborted = 1; fail()
#elif defined(EXTENDED)
	:: false	/* the bug: deaf to the root while wiring */
#else
	:: timeout -> fail()
#endif
	fi
}

proctype Rank(byte r; byte vic) {
	byte kind, v, succ, i, s, res;
	int have;
	bool aborted;

	have = 1 << r;	/* its own listen address */

	/* INFO_TO_ROOT, then INFO_FROM_ROOT */
	step_point();
	toroot!r, M_INFO_TO_ROOT;
	step_point();
	if
	:: fromroot[r]?kind, v ->
		if
		:: kind == M_INFO_FROM_ROOT -> succ = v
		:: else -> aborted = (kind == M_ABORT); fail()
		fi
#ifndef EXTENDED
	:: timeout -> fail()
#endif
	fi;
	assert(succ == ring_next(r, N));
#ifndef EXTENDED
	toroot!r, M_CLOSED;	/* upstream: the root connection is closed here */
#endif

	/* wireRing: connect to the successor (a HELLO), accept the predecessor */
	if
	:: N > 1 ->
		step_point();
		ring[r]!M_HELLO, r;
		step_point();
		ring_recv(M_HELLO);
		assert(v == ring_prev(r, N));

		/* ringAllGather: send slice (r - i) mod n, receive (r - i - 1) mod n */
		i = 0;
		do
#ifdef BUG_SHORT_GATHER
		:: i + 1 < ring_steps(N) ->
#else
		:: i < ring_steps(N) ->
#endif
			s = ring_send_slice(r, i, N);
			assert(have & (1 << s));	/* gather: only slices it holds */
			step_point();
			ring[r]!M_RING_DATA, s;
			step_point();
			ring_recv(M_RING_DATA);
			assert(v == ring_recv_slice(r, i, N));
			have = have | (1 << v);
			i++
		:: else -> break
		od
	:: else
	fi;

#ifdef EXTENDED
	/* RING_DONE, then wait for COMPLETE */
	step_point();
	toroot!r, M_RING_DONE;
#ifndef BUG_NO_COMPLETE
	step_point();
	fromroot[r]?kind, v;
	if
	:: kind == M_COMPLETE
	:: else -> assert(kind == M_ABORT); aborted = 1; fail()
	fi;
#endif
#endif
	assert(have == (1 << N) - 1);	/* gather: every rank's address */
	res = SUCCEEDED;
finish:
	atomic { result[r] = res; ended++ }
}

/* Root.run: gather, reply, (EXTENDED) stay until every ring is wired. */
proctype Root() {
	byte who, kind, have, done, i;

	do
	:: have < N ->
		if
		:: toroot?who, kind ->
			if
			:: kind == M_INFO_TO_ROOT -> have++
			:: else -> goto abort	/* a rank hung up or aborted */
			fi
#ifndef EXTENDED
		:: timeout -> goto abort	/* accept timed out: a rank never came */
#endif
		fi
	:: else -> break
	od;
	i = 0;
	do
	:: i < N -> fromroot[i]!M_INFO_FROM_ROOT, ring_next(i, N); i++
	:: else -> break
	od;
#ifdef EXTENDED
	do
	:: done < N ->
		toroot?who, kind;
		if
		:: kind == M_RING_DONE -> done++
		:: else -> goto abort
		fi
	:: else -> break
	od;
	i = 0;
	do
	:: i < N -> fromroot[i]!M_COMPLETE, 0; i++
	:: else -> break
	od;
#endif
	goto out;
abort:
#ifndef BUG_ROOT_KEEPS_ABORT
	/* EXTENDED: ABORT to every rank; default: close every connection */
	i = 0;
	do
#ifdef EXTENDED
	:: i < N -> fromroot[i]!M_ABORT, 0; i++
#else
	:: i < N -> fromroot[i]!M_CLOSED, 0; i++
#endif
	:: else -> break
	od;
#endif
out:
	/* the root reads on until every rank hung up; what is left is dropped */
	skip
}

init {
	byte i, first;
	if
	:: skip	/* no fault */
	:: select(i : 0 .. N - 1); victim = i
	fi;
	atomic {
		run Root();
		i = 0;
		do
		:: i < N -> run Rank(i, victim); i++
		:: else -> break
		od
	};
	ended == N;
	first = DEAD;
	i = 0;
	do
	:: i < N ->
		assert(victim != 255 || result[i] == SUCCEEDED);	/* validity */
		if
		:: result[i] == DEAD
		:: first == DEAD -> first = result[i]
		:: else ->
#if defined(EXTENDED) || defined(CHECK_AGREEMENT)
			assert(result[i] == first)	/* agreement */
#else
			skip
#endif
		fi;
		i++
	:: else -> break
	od
}
