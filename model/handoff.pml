/*
 * The forward handoff (ncclInit, docs/sources.md#s000-2): runtime/nrt's Init runs
 * nrt_handoff_run once per process behind a sync.Once; concurrent first
 * callers wait for that one run. Every fault of the fault matrix is a
 * nondeterministic choice of init, so one run of pan covers them all.
 *
 * Properties (assertions and monitors, see docs/models.md#properties):
 *   once      exactly one handoff runs, and every caller gets its outcome
 *   table     a caller back from Init sees all slots or none (MSLOTS
 *             representative ones of the SLOT_COUNT),
 *             and all of them exactly when the outcome is success
 *   sentinel  once armed, the init-error sentinel is never cleared
 *   publish   no forward call ever goes through a NULL slot
 *
 * Planted bugs (-D), each of which pan must reject:
 *   BUG_PUBLISH_BEFORE_COMPAT  dlsym every entry point before the compat
 *                              gate, and on a mismatch discard only the probe
 *   BUG_KEEP_ON_MISSING        a missing entry point leaves the slots filled
 *                              so far in place (no zero_all_slots)
 *   BUG_CLEAR_SENTINEL         a guarded trampoline clears the message, not
 *                              just the stream state
 *   BUG_DONE_BEFORE_RUN        initDone is stored before the handoff runs
 *   BUG_RACY_ONCE              the once-flag is tested without the lock
 */
#include "zspec.pml"

#ifndef CALLERS
#define CALLERS 3
#endif

#define FAIL 1
#define OK 2

/* The library under test, chosen once by init: the fault matrix. */
bool lib_loads;     /* dlopen succeeds */
bool lib_probe;     /* it exports neuronGetVersionInfo */
bool lib_rc_fails;  /* every call returns non-zero (the fail-rc double) */
int lib_compat;     /* what the probe reports */
byte lib_missing;   /* dlsym index of the entry point left out, 0 = none */

/* libnrt's state: the slot table (nvalid is its count, updated with it) and
 * the sentinel (armed = nrt_nccl_init_error.len != 0). */
/* The table is abstracted to MSLOTS representative entries, by dlsym index:
 * the probe (0), the first other (1), the middle and the last one; the
 * indices of the e2e doubles missing-1, missing-18 and missing-36. */
#define MSLOTS 4
#define dlsym_index(m) ((m) == 0 -> PROBE_INDEX : ((m) == 1 -> 1 : ((m) == 2 -> SLOT_COUNT / 2 : SLOT_COUNT - 1)))
bit slot[MSLOTS];
byte nvalid;
bool armed;
bit sstate;         /* the stream's iostate a trampoline "clears" */

/* runtime/nrt/init.go: initOnce (a flag and its mutex), initDone, ready, outcome. */
bool once_done;
bool once_mu;
byte runs;
bool init_done;
bool ready;
byte outcome;

inline set_slot(k) {
	d_step { slot[k] = 1; nvalid++ }
}

/* zero_all_slots: a memset, one slot at a time. */
inline zero_all() {
	z = 0;
	do
	:: z < MSLOTS ->
		d_step { if :: slot[z] -> slot[z] = 0; nvalid-- :: else fi; z++ }
	:: else -> break
	od
}

/* arm(): writing the message is what arms the sentinel. */
inline arm() {
	armed = 1; sstate = 0
}

/* handoff.c nrt_handoff_run, then init.go handoff's stores. */
inline handoff() {
	runs++;
	if
	:: !lib_loads -> zero_all(); arm(); res = FAIL; goto published
	:: else
	fi;
	if
	:: !lib_probe -> zero_all(); arm(); res = FAIL; goto published
	:: else
	fi;
	set_slot(PROBE_INDEX);
#ifdef BUG_PUBLISH_BEFORE_COMPAT
	k = 1;
	do
	:: k < MSLOTS && dlsym_index(k) != lib_missing -> set_slot(k); k++
	:: k < MSLOTS && dlsym_index(k) == lib_missing -> zero_all(); arm(); res = FAIL; goto published
	:: else -> break
	od;
	if
	:: lib_compat != COMPAT_ID ->
		d_step { slot[PROBE_INDEX] = 0; nvalid-- };
		arm(); res = FAIL; goto published
	:: else
	fi;
	res = OK;
#else
	/* the probe's rc is not looked at: only the compat id it stores */
	if
	:: lib_compat != COMPAT_ID -> zero_all(); arm(); res = FAIL; goto published
	:: else
	fi;
	k = 1;
	do
	:: k < MSLOTS && dlsym_index(k) != lib_missing -> set_slot(k); k++
	:: k < MSLOTS && dlsym_index(k) == lib_missing ->
#ifndef BUG_KEEP_ON_MISSING
		zero_all();
#endif
		arm(); res = FAIL; goto published
	:: else -> res = OK; break
	od;
#endif
published:
	outcome = res;
	init_done = 1;
	ready = (res == OK)
}

/* A guarded nccl* trampoline (nrt_slots.h): report and return 1 while the
 * sentinel is armed, else forward through the slot. */
inline guarded_call(k, rc) {
	if
	:: armed ->
#ifdef BUG_CLEAR_SENTINEL
		armed = 0;
#endif
		sstate = 0; rc = FAIL
	:: else ->
		assert(slot[k]);	/* publish: never call through NULL */
		rc = (lib_rc_fails -> FAIL : OK)
	fi
}

/* A first caller: Init (sync.Once.Do), then use the table. */
proctype Caller(byte id) {
	byte res, k, z, rc;
#ifdef BUG_DONE_BEFORE_RUN
	init_done = 1;
#endif
#ifdef BUG_RACY_ONCE
	if
	:: once_done -> skip
	:: else -> handoff(); once_done = 1
	fi;
#else
	if
	:: once_done -> skip	/* Once's fast path: an atomic load */
	:: else ->
		atomic { !once_mu -> once_mu = 1 };
		if
		:: !once_done -> handoff(); once_done = 1
		:: else
		fi;
		once_mu = 0
	fi;
#endif
	/* back from Init: the table is all or nothing, and says what Init said */
	d_step {
		assert(runs == 1);
		assert(outcome == OK || outcome == FAIL);
		assert(nvalid == 0 || nvalid == MSLOTS);
		assert((outcome == OK) == (nvalid == MSLOTS));
		assert((outcome == FAIL) == armed)
	};
	/* two guarded calls: the sentinel stays armed across them */
	k = 1 + id;
	guarded_call(k, rc);
	assert(outcome == OK || rc == FAIL);
	guarded_call(k, rc);
	assert(outcome == OK || rc == FAIL)
}

/* A caller that did not run Init: the Go API's mustInit (initDone), then the
 * trampoline; and the unguarded hot path behind ready. */
proctype Early() {
	byte k, rc;
	select(k : 1 .. MSLOTS - 1);
	if
	:: init_done -> guarded_call(k, rc)
	:: else	/* ErrUninitialized */
	fi;
	if
	:: ready -> assert(slot[MSLOTS - 1])	/* ncclNetworkProxyProgress */
	:: else
	fi
}

/* sentinel: never cleared once armed (a monitor: it sees armed go up, then
 * fails if it ever comes down). */
bool sentinel_cleared;
active proctype SentinelWatch() {
end_idle:	armed;
end_armed:	atomic { !armed -> sentinel_cleared = 1; assert(!sentinel_cleared) }
}

init {
	byte i;
	if
	:: lib_loads = 0
	:: lib_loads = 1; lib_probe = 0
	:: lib_loads = 1; lib_probe = 1; lib_compat = COMPAT_ID - 1
	:: lib_loads = 1; lib_probe = 1; lib_compat = COMPAT_ID; select(i : 1 .. MSLOTS - 1); lib_missing = dlsym_index(i)
	:: lib_loads = 1; lib_probe = 1; lib_compat = COMPAT_ID; lib_rc_fails = 1
	:: lib_loads = 1; lib_probe = 1; lib_compat = COMPAT_ID
	fi;
	atomic {
		i = 0;
		do
		:: i < CALLERS -> run Caller(i); i++
		:: else -> break
		od;
		run Early()
	}
}
