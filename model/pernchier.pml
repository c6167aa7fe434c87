/*
 * The per-NC bootstrap of get_nccl_comm over the instances (spec extension
 * agree-exchange-hier; docs/bootstrap-hierarchy.md#the-agree-phase;
 * runtime/collectives hierexchange.go). On a hierarchical world whose group
 * lies on its instances of PER_INSTANCE (L) ranks, each member sends its
 * ENC_SIG_MSG_SIZE-byte verdict to its instance's leader (hier_leader), each
 * leader the AND of its instance and its own to rank 0, which ANDs its own
 * members' and the other leaders'; the ENC_UID_MSG_SIZE-byte unique id and
 * the root's verdict then go from rank 0 to every other leader and to its own
 * members, and from each leader to its members. pernc.pml is the seed's tree
 * and hypercube, which flat worlds and groups across the instances keep.
 *
 * The transport, the faults and the properties are pernc.pml's: a link per
 * ordered pair, in order and buffered; at most one rank disagrees (another
 * signature) or dies at any step; a rank that dies or fails closes the links
 * a rank could be waiting on (its parent's up link, its children's down
 * links); a message of the wrong size fails the receive.
 *
 * Properties:
 *   termination  every rank ends (pan's invalid end states)
 *   wiring       each message reaches the rank the sender's formula names
 *                (assert(who == r)): the shape is the same on every rank
 *   validity     no fault: every rank succeeds
 *   agreement    a disagreeing rank makes every rank fail; with a dead rank
 *                the live ranks all succeed or all fail, unless the rank
 *                died after its verdict left it (the split of a one-shot
 *                broadcast, as in pernc.pml; -DCHECK_SPLIT shows it)
 *   uid          a rank that succeeds holds the root's id, received
 *
 * Planted bugs (-D), each of which pan must reject:
 *   BUG_SKIP_AND        a leader ignores its members' ok bytes
 *   BUG_EARLY_FORWARD   a leader reports before its last member has
 *   BUG_LEADER_OWN_UID  a leader passes on its own id, not the root's
 *   BUG_DOWN_SHORT      a leader's fan-out to its members stops one early
 *   BUG_LOCAL_VERDICT   a rank acts on its own match, not the root's verdict
 *   BUG_NO_CLOSE        a rank failing on a transport error keeps its links
 *   BUG_OWN_SHAPE       the last rank takes its instances from its own view
 *                       (one instance of every rank), not the world's L
 */
#include "zspec.pml"

#ifndef NRANKS
#define NRANKS 4
#endif
#ifndef PER_INSTANCE
#define PER_INSTANCE 2
#endif
#define N NRANKS
#define L PER_INSTANCE

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

/* the rank r sends up to and hears from: its leader, or for a leader rank 0 */
#define parent_of(r, ld) ((r) != (ld) -> (ld) : 0)

/* Each rank has one parent in both directions, so a link is named by the
 * rank at its lower end: up[c] carries c's verdict to its parent, down[c]
 * the id to c. Messages: kind, the rank the sender addressed, bytes on the
 * wire, the flag byte (ok / valid), the payload (signature / id). */
chan up[N] = [2] of { byte, byte, byte, bit, byte };
chan down[N] = [2] of { byte, byte, byte, bit, byte };

byte fault;
byte victim;
byte result[N];
bool reported[N];
byte ended;

/* Closing tells the ranks that could be waiting on this one: its parent and
 * its children (a leader's members; rank 0's other leaders too). */
inline close_links() {
	if
	:: r > 0 -> up[r]!CLOSED, parent_of(r, ld), 0, 0, 0
	:: else
	fi;
	if
	:: r == ld ->
		c = r + 1;
		do
		:: c < ld + nloc -> down[c]!CLOSED, r, 0, 0, 0; c++
		:: else -> break
		od;
		if
		:: r == 0 ->
			c = lv;
			do
			:: c < N -> down[c]!CLOSED, 0, 0, 0, 0; c = c + lv
			:: else -> break
			od
		:: else
		fi
	:: else
	fi
}

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

inline recv(ch, size) {
	ch?kind, who, got, f, v;
	if
	:: kind != DATA || got != size -> fail()
	:: else -> assert(who == r)	/* wiring */
	fi
}

/* a verdict heard: AND its ok byte and its digest against this rank's */
inline and_verdict() {
	if
#ifdef BUG_SKIP_AND
	:: match -> match = (v == sig)
#else
	:: match -> match = f && (v == sig)
#endif
	:: else
	fi
}

proctype Rank(byte r; byte flt; byte vic) {
	byte lv, ld, nloc, last, c, kind, who, got, v, sig, uid, res;
	bit f;
	bool match, valid, rep;

	lv = L;
#ifdef BUG_OWN_SHAPE
	if
	:: r == N - 1 -> lv = N
	:: else
	fi;
#endif
	ld = hier_leader(r, lv);
	nloc = hier_local_n(r, N, lv);
	last = ld + nloc;	/* one past the instance's last rank */
#ifdef BUG_EARLY_FORWARD
	if
	:: r > 0 && r == ld && nloc > 1 -> last = ld + nloc - 1
	:: else
	fi;
#endif
	sig = (flt == DISAGREE && r == vic -> SIG_OTHER : SIG_SAME);
	uid = (r == 0 -> ROOT_UID : NO_UID);

	/* validate_rg_signature over the instances */
	match = 1;
	if
	:: r == ld ->
		c = r + 1;
		do
		:: c < last -> step_point(); recv(up[c], SIG_MSG_SIZE); and_verdict(); c++
		:: else -> break
		od
	:: else
	fi;
	if
	:: r == 0 ->
		c = lv;
		do
		:: c < N -> step_point(); recv(up[c], SIG_MSG_SIZE); and_verdict(); c = c + lv
		:: else -> break
		od
	:: else ->
		step_point();
		f = (SIG_OK_END <= SIG_MSG_SIZE -> match : 0);
		v = (SIG_DIGEST_END <= SIG_MSG_SIZE -> sig : SIG_GARBLED);
		up[r]!DATA, parent_of(r, ld), SIG_MSG_SIZE, f, v;
		if
		:: last < ld + nloc -> step_point(); recv(up[last], SIG_MSG_SIZE)	/* heard too late */
		:: else
		fi
	fi;
	rep = 1;

	/* broadcast_unique_id over the instances */
	valid = (r == 0 && match);
	if
	:: r != 0 ->
		step_point();
		recv(down[r], UID_MSG_SIZE);
		valid = f;
#ifndef BUG_LEADER_OWN_UID
		uid = v
#else
		if
		:: r != ld -> uid = v
		:: else
		fi
#endif
	:: else
	fi;
	if
	:: r == ld ->
		f = (UID_VALID_END <= UID_MSG_SIZE -> valid : 0);
		v = (UID_ID_END <= UID_MSG_SIZE -> uid : NO_UID);
		if
		:: r == 0 ->
			c = lv;
			do
			:: c < N -> step_point(); down[c]!DATA, c, UID_MSG_SIZE, f, v; c = c + lv
			:: else -> break
			od
		:: else
		fi;
		c = r + 1;
		do
#ifdef BUG_DOWN_SHORT
		:: c + 1 < ld + nloc ->
#else
		:: c < ld + nloc ->
#endif
			step_point(); down[c]!DATA, c, UID_MSG_SIZE, f, v; c++
		:: else -> break
		od
	:: else
	fi;
#ifdef BUG_LOCAL_VERDICT
	valid = match;
#endif
	if
	:: valid ->
		assert(uid == ROOT_UID);	/* uid */
		res = SUCCEEDED
	:: else -> res = FAILED
	fi;
finish:
	atomic { result[r] = res; reported[r] = rep; ended++ }
}

init {
	byte i, first;
	bool split;

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
