/*
 * The bidirectional ring all-gather and the bidirectional broadcast down a
 * ring (docs/models.md#the-bidirectional-ring): the shape every ring of the
 * bootstrap at scale runs (the flat ring, the intra and the inter rings of
 * docs/bootstrap-hierarchy.md), here on one ring of NRANKS members, member j
 * holding record j (a bit of a mask).
 *
 * All-gather: each member streams records both ways round the ring over the
 * one connection to each neighbour (TCP is full duplex). Clockwise (to the
 * successor) it sends its own record and then what it received from its
 * predecessor, bidi_cw_steps(n) records in all; counter-clockwise (to the
 * predecessor) the same mirrored, bidi_ccw_steps(n). The two counts sum to
 * n - 1 and the two streams meet without overlap, so the all-gather takes
 * bidi_steps(n) = floor(n / 2) sequential steps instead of n - 1. At step i
 * a member sends clockwise slice r - i and receives r - i - 1 from its
 * predecessor; it sends counter-clockwise slice r + i and receives r + i + 1
 * from its successor (mod n). A step's four transfers overlap: a member
 * takes whichever of them its peers are ready for (a block can be larger than
 * the socket buffer, so the channels are rendezvous: a message is taken only
 * when its receiver reads it).
 *
 * Broadcast down (phase 3 of the hierarchy, bidirectional): member 0 (the
 * leader) sends the block it holds both ways; member m of 1..bidi_down_cw(k)
 * takes it from its predecessor and forwards it clockwise unless it is the
 * last of them; the others take it from their successor and forward it
 * counter-clockwise: ceil((k - 1) / 2) hops instead of k - 1.
 *
 * The formulas are the model's own (bidi_* below) until the spec holds rows
 * for them; the simulator (bench/bootsim, TestBidiRingStepByStep) charges
 * the same step counts.
 *
 * Faults (-DFAULTS): one member may die at any step point; its sockets close,
 * and a peer blocked on it fails and closes its own.
 *
 * Properties:
 *   termination  every member ends (pan's invalid end states)
 *   gather       a member that succeeds holds every record; a member sends
 *                only records it holds; no record arrives twice (the two
 *                streams partition the ring)
 *   steps        the all-gather's steps are bidi_steps(n); the broadcast
 *                reaches every member exactly once, in at most
 *                bidi_down_cw(n) hops
 *   validity     no fault: every member succeeds
 *
 * Planted bugs (-D), each of which pan must reject:
 *   BUG_BIDI_SAME_SLICE  the counter-clockwise stream sends slice r - i (the
 *                        clockwise one's) instead of r + i (shows from 5
 *                        members: below, it only ever sends its own record)
 *   BUG_BIDI_ONE_WAY     both streams go to the successor
 *   BUG_BIDI_CEIL_BOTH   both streams run ceil((n - 1) / 2) steps (an even
 *                        ring's middle record arrives twice)
 *   BUG_BIDI_FLOOR_BOTH  both streams run floor((n - 1) / 2) steps (an even
 *                        ring's middle record never arrives)
 *   BUG_BIDI_SERIAL      a member sends both ways before it receives (the
 *                        send of a block larger than the socket buffer
 *                        blocks: every member waits on a send)
 *   BUG_DOWN_BOTH_FULL   the broadcast forwards all the way round in both
 *                        directions
 */
#ifndef NRANKS
#define NRANKS 4
#endif
#define N NRANKS
#define ALL ((1 << N) - 1)
#define DOWN_BIT (1 << N)	/* the leader's block of the other instances */

#define ring_next(r, n) (((r) + 1) % (n))
#define ring_prev(r, n) ((((r) - 1) + (n)) % (n))
#define bidi_cw_steps(n) ((n) / 2)
#ifdef BUG_BIDI_CEIL_BOTH
#define bidi_ccw_steps(n) ((n) / 2)
#else
#define bidi_ccw_steps(n) (((n) - 1) / 2)
#endif
#ifdef BUG_BIDI_FLOOR_BOTH
#undef bidi_cw_steps
#define bidi_cw_steps(n) (((n) - 1) / 2)
#endif
#define bidi_steps(n) ((n) / 2)
#define bidi_cw_send(r, i, n) ((((r) - (i)) % (n) + (n)) % (n))
#define bidi_cw_recv(r, i, n) ((((r) - (i) - 1) % (n) + (n)) % (n))
#ifdef BUG_BIDI_SAME_SLICE
#define bidi_ccw_send(r, i, n) bidi_cw_send(r, i, n)
#else
#define bidi_ccw_send(r, i, n) (((r) + (i)) % (n))
#endif
#define bidi_ccw_recv(r, i, n) (((r) + (i) + 1) % (n))
#define bidi_down_cw(k) ((k) / 2)
#define bidi_down_ccw(k) (((k) - 1) / 2)

#define SUCCEEDED 1
#define FAILED 2
#define DEAD 3

/* into member r from its predecessor (clockwise) and from its successor */
chan cw[N] = [0] of { byte };
chan ccw[N] = [0] of { byte };
/* never received from / never sent on: a transfer a member is not waiting for */
chan nosend = [0] of { byte };
chan norecv = [0] of { byte };

bool closed[N];
byte victim = 255;
byte result[N];
byte ended;
byte downs[N];	/* how often the broadcast reached each member */

inline fail() {
	atomic { closed[r] = 1; res = FAILED; goto finish }
}

inline step_point() {
	if
	:: r == victim -> atomic { closed[r] = 1; res = DEAD; goto finish }
	:: else
	fi
}

proctype Member(byte r) {
	byte i, v, res, nx, pv, scw, sccw;
	int have;
	bool sentcw, sentccw, gotcw, gotccw;
	byte got;
	chan outcw, outccw, incw, inccw;

	nx = ring_next(r, N);
	pv = ring_prev(r, N);
	have = 1 << r;
	i = 0;
	do
	:: i < bidi_steps(N) ->
		/* the transfers of step i this member takes part in */
		d_step {
			sentcw = (i >= bidi_cw_steps(N));
			gotcw = sentcw;
			sentccw = (i >= bidi_ccw_steps(N));
			gotccw = sentccw;
			scw = bidi_cw_send(r, i, N);
			sccw = bidi_ccw_send(r, i, N);
			assert(sentcw || (have & (1 << scw)) != 0);	/* gather: only records it holds */
			assert(sentccw || (have & (1 << sccw)) != 0)
		};
		step_point();
#ifdef BUG_BIDI_SERIAL
		if
		:: !sentcw -> if :: cw[nx]!scw :: closed[nx] -> fail() fi
		:: else
		fi;
		if
		:: !sentccw -> if :: ccw[pv]!sccw :: closed[pv] -> fail() fi
		:: else
		fi;
		sentcw = 1;
		sentccw = 1;
#endif
		do
		:: d_step {
				outcw = nosend; outccw = nosend; incw = norecv; inccw = norecv;
				if :: !sentcw -> outcw = cw[nx] :: else fi;
				if :: !sentccw -> outccw = ccw[pv] :: else fi;
#ifdef BUG_BIDI_ONE_WAY
				if :: !sentccw -> outccw = ccw[nx] :: else fi;
#endif
				if :: !gotcw -> incw = cw[r] :: else fi;
				if :: !gotccw -> inccw = ccw[r] :: else fi
			};
			if
			:: outcw!scw -> sentcw = 1
			:: outccw!sccw -> sentccw = 1
			:: incw?v ->
				d_step {
					assert(v == bidi_cw_recv(r, i, N));
					assert((have & (1 << v)) == 0);	/* no record twice */
					have = have | (1 << v);
					gotcw = 1;
					v = 0
				}
			:: inccw?v ->
				d_step {
					assert(v == bidi_ccw_recv(r, i, N));
					assert((have & (1 << v)) == 0);
					have = have | (1 << v);
					gotccw = 1;
					v = 0
				}
			:: (!sentcw && closed[nx]) || (!gotcw && closed[pv]) ||
			   (!sentccw && closed[pv]) || (!gotccw && closed[nx]) -> fail()
			:: sentcw && sentccw && gotcw && gotccw -> break
			fi
		od;
		atomic { i++; outcw = nosend; outccw = nosend; incw = norecv; inccw = norecv }
	:: else -> break
	od;
	assert(i == bidi_steps(N));
	assert(have == ALL);	/* gather */

	/* the broadcast down: member 0 sends both ways */
	step_point();
	if
	:: r == 0 ->
		have = have | DOWN_BIT;
		if
		:: bidi_down_cw(N) >= 1 -> if :: cw[nx]!N :: closed[nx] -> fail() fi
		:: else
		fi;
		if
		:: bidi_down_ccw(N) >= 1 -> if :: ccw[pv]!N :: closed[pv] -> fail() fi
		:: else
		fi
#ifdef BUG_DOWN_BOTH_FULL
	:: else ->
		/* each direction forwards all the way: r takes both copies */
		do
		:: got < 2 ->
			if
			:: cw[r]?v -> got++; if :: r + 1 < N -> if :: cw[nx]!v :: closed[nx] -> fail() fi :: else fi
			:: ccw[r]?v -> got++; if :: r > 1 -> if :: ccw[pv]!v :: closed[pv] -> fail() fi :: else fi
			:: closed[pv] || closed[nx] -> fail()
			fi
		:: else -> break
		od;
		atomic { downs[r] = downs[r] + got; have = have | DOWN_BIT }
#else
	:: r >= 1 && r <= bidi_down_cw(N) ->
		if
		:: cw[r]?v -> assert(v == N)
		:: closed[pv] -> fail()
		fi;
		downs[r]++;
		have = have | DOWN_BIT;
		if
		:: r < bidi_down_cw(N) -> if :: cw[nx]!v :: closed[nx] -> fail() fi
		:: else
		fi
	:: else ->
		if
		:: ccw[r]?v -> assert(v == N)
		:: closed[nx] -> fail()
		fi;
		downs[r]++;
		have = have | DOWN_BIT;
		if
		:: r > N - bidi_down_ccw(N) -> if :: ccw[pv]!v :: closed[pv] -> fail() fi
		:: else
		fi
#endif
	fi;
	assert(r == 0 || downs[r] == 1);	/* the broadcast reaches each member once */
	res = SUCCEEDED;
finish:
	atomic { result[r] = res; ended++ }
}

init {
	byte i;
#ifdef FAULTS
	if
	:: skip
	:: select(i : 0 .. N - 1); victim = i
	fi;
#endif
	atomic {
		i = 0;
		do
		:: i < N -> run Member(i); i++
		:: else -> break
		od
	};
	ended == N;
	i = 0;
	do
	:: i < N ->
		assert(victim != 255 || result[i] == SUCCEEDED);	/* validity */
		i++
	:: else -> break
	od
}
