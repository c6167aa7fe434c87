/*
 * The per-NC bootstrap of get_nccl_comm (docs/sources.md#s004-5; runtime/collectives
 * exchange.go): a binary-tree AND-reduce of the ENC_SIG_MSG_SIZE-byte
 * signature verdicts up to rank 0, then a hypercube broadcast of the
 * ENC_UID_MSG_SIZE-byte unique id and the root's verdict. NRANKS ranks; at
 * most one of them disagrees (a different signature) or dies at any step.
 *
 * The transport (runtime/transport): a link per ordered pair, in order,
 * buffered (a 17- or 129-byte send never waits on the receiver). A rank that
 * dies, or fails on a transport error, closes its links (the TCP endpoint's
 * fail: ABORT to every rank, or the process exiting): its peers' receives
 * return an error once its queued messages are read, and a send to it may
 * fail. A receive of the wrong size fails (Transport.Recv: exactly len(data)
 * bytes); a field of a message image beyond the size on the wire is lost.
 *
 * Properties:
 *   termination  every rank ends (pan's invalid end states)
 *   tree         the parent of each child of r is r (the spec's formulas)
 *   validity     no fault: every rank succeeds
 *   agreement    a disagreeing rank makes every rank fail; with a dead rank
 *                the live ranks all succeed or all fail, unless the rank
 *                died after reporting its verdict up the tree (see below)
 *   uid          a rank that succeeds holds the root's id, received
 *
 * A rank that dies during the broadcast, after the root has its verdict,
 * splits the world: the ranks it already served succeed, those below it
 * fail. No one-shot broadcast can avoid that; -DCHECK_SPLIT asserts
 * agreement there too and pan shows the split (a documented limit).
 *
 * Planted bugs (-D), each of which pan must reject:
 *   BUG_SKIP_AND        a rank ignores its children's ok bytes
 *   BUG_BCAST_SHORT     the fan-out loop stops one step early
 *   BUG_LOCAL_VERDICT   a rank acts on its own match, not the root's verdict
 *   BUG_NO_CLOSE        a rank that fails on a transport error keeps its
 *                       links open (does not propagate the failure)
 *   BUG_UID_NOT_COPIED  a rank takes the verdict but not the id
 */
#include "zspec.pml"

#ifndef NRANKS
#define NRANKS 4
#endif
#define N NRANKS

#define DATA 1
#define CLOSED 2

#define SIG_SAME 0
#define SIG_OTHER 1
#define SIG_GARBLED 2
#define ROOT_UID 7
#define NO_UID 0

#define NONE 0
#define DISAGREE 1
#define DIE 2

#define RUNNING 0
#define SUCCEEDED 1
#define FAILED 2
#define DEAD 3

/* Links. Each rank has one tree parent and one cube parent, so the link a
 * message travels on is named by the rank at its lower end: up[c] carries
 * c's verdict to its tree parent, down[c] the id to c from its cube parent.
 * Messages: kind, the rank at the other end, bytes on the wire, the flag
 * byte (ok / valid), the payload (signature / id). */
chan up[N] = [2] of { byte, byte, byte, bit, byte };
chan down[N] = [2] of { byte, byte, byte, bit, byte };

byte fault;
byte victim;
byte result[N];
bool reported[N];	/* the rank's verdict left it (tree send, or the root's AND) */
byte ended;

/* Closing tells the ranks that could be waiting on this one: its tree
 * parent and its cube children. (The TCP endpoint's ABORT reaches every
 * rank; a transport that only closes is the harder case.) */
inline close_links() {
	if
	:: r > 0 -> up[r]!CLOSED, tree_parent(r), 0, 0, 0
	:: else
	fi;
	q = mask >> 1;
	do
	:: q != 0 ->
		if
		:: cube_child(r, q) < N -> down[cube_child(r, q)]!CLOSED, r, 0, 0, 0
		:: else
		fi;
		q = q >> 1
	:: else -> break
	od
}

/* the victim may die before any step */
inline step_point() {
	if
	:: flt == DIE && r == vic ->
		atomic { close_links(); res = DEAD; goto finish }
	:: true
	fi
}

inline fail() {
#ifndef BUG_NO_CLOSE
	close_links();
#endif
	res = FAILED;
	goto finish
}

/* a message from peer on link ch, of the given size */
inline recv(ch, peer, size) {
	ch?kind, who, got, f, v;
	if
	:: kind != DATA || got != size -> fail()
	:: else -> assert(who == peer)	/* the formulas of both ends agree */
	fi
}

proctype Rank(byte r; byte flt; byte vic) {
	byte q, c, p, k, kind, who, got, v, mask, step, sig, uid, res;
	bit f;
	bool match, valid, rep;

	sig = (flt == DISAGREE && r == vic -> SIG_OTHER : SIG_SAME);
	uid = (r == 0 -> ROOT_UID : NO_UID);	/* ncclGetUniqueId on bootstrap rank 0 */
	/* cubeMask: this rank's level in the hypercube */
	mask = 1;
	do
	:: (mask & r) == 0 ->
		mask = mask << 1;
		if
		:: cube_climb_stop(N, mask) -> break
		:: else
		fi
	:: else -> break
	od;

	/* validate_rg_signature: AND the children's verdicts, report up */
	match = 1;
	k = 0;
	do
	:: k < TREE_CHILDREN ->
		c = tree_child(r, k);
		if
		:: c < N ->
			step_point();
			recv(up[c], r, SIG_MSG_SIZE);
			if
#ifdef BUG_SKIP_AND
			:: match -> match = (v == sig)
#else
			:: match -> match = f && (v == sig)
#endif
			:: else
			fi
		:: else
		fi;
		k++
	:: else -> break
	od;
	if
	:: r > 0 ->
		p = tree_parent(r);
		assert(p < r);
		step_point();
		/* the image loses the fields that do not fit the wire size */
		f = (SIG_OK_END <= SIG_MSG_SIZE -> match : 0);
		v = (SIG_DIGEST_END <= SIG_MSG_SIZE -> sig : SIG_GARBLED);
		up[r]!DATA, p, SIG_MSG_SIZE, f, v
	:: else
	fi;
	rep = 1;

	/* broadcast_unique_id: climb to this rank's level, take the id and the
	 * verdict from the cube parent, fan out to the children below */
	valid = (r == 0 && match);
	if
	:: (mask & r) != 0 ->
		p = cube_parent(r, mask);
		step_point();
		recv(down[r], p, UID_MSG_SIZE);
		valid = f;
#ifndef BUG_UID_NOT_COPIED
		uid = v
#endif
	:: else
	fi;
	step = mask >> 1;
	do
#ifdef BUG_BCAST_SHORT
	:: step > 1 ->
#else
	:: step != 0 ->
#endif
		c = cube_child(r, step);
		if
		:: c < N ->
			step_point();
			f = (UID_VALID_END <= UID_MSG_SIZE -> valid : 0);
			v = (UID_ID_END <= UID_MSG_SIZE -> uid : NO_UID);
			down[c]!DATA, r, UID_MSG_SIZE, f, v
		:: else
		fi;
		step = step >> 1
	:: else -> break
	od;
#ifdef BUG_LOCAL_VERDICT
	valid = match;
#endif
	if
	:: valid ->
		assert(uid == ROOT_UID);	/* uid: only an id received from the root */
		res = SUCCEEDED
	:: else -> res = FAILED	/* failed signature validation */
	fi;
finish:
	atomic { result[r] = res; reported[r] = rep; ended++ }
}

init {
	byte i, c, k, first;
	bool split;

	/* tree: the spec's parent formula inverts its children formula */
	i = 0;
	do
	:: i < N ->
		k = 0;
		do
		:: k < TREE_CHILDREN ->
			c = tree_child(i, k);
			assert(c >= N || tree_parent(c) == i);
			k++
		:: else -> break
		od;
		i++
	:: else -> break
	od;

	if
	:: fault = NONE
	:: N > 1 -> fault = DISAGREE; select(i : 0 .. N - 1); victim = i
	:: N > 1 -> fault = DIE; select(i : 0 .. N - 1); victim = i
	fi;
	atomic {
		i = 0;
		do
		:: i < N -> run Rank(i, fault, victim); i++
		:: else -> break
		od
	};

	ended == N;
	split = (fault == DIE && result[victim] == DEAD && reported[victim]);
#ifdef CHECK_SPLIT
	split = 0;
#endif
	first = DEAD;
	i = 0;
	do
	:: i < N ->
		if
		:: result[i] == DEAD
		:: first == DEAD -> first = result[i]
		:: else -> assert(split || result[i] == first)	/* agreement */
		fi;
		assert(fault != NONE || result[i] == SUCCEEDED);	/* validity */
		assert(fault != DISAGREE || result[i] == FAILED);	/* agreement under disagreement */
		i++
	:: else -> break
	od
}
