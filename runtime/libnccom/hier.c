/*
 * The hierarchical bootstrap's shape, shared by the rank side (hier_rank.c)
 * and the root (root.c, hier_root.c): where L (ranks per instance,
 * vncPerInstance of docs/sources.md#s001-3) comes from, the dispatch, and the
 * test-only fault hooks. docs/bootstrap-hierarchy.md states the protocol.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "nccom.h"

NRT_STATUS nccom_per_instance(int *L)
{
	static atomic_bool told;
	*L = 0;
	const char *s = getenv(ENV_BOOTSTRAP_PER_INSTANCE);
	if (s == NULL || *s == 0) {
		/* The seed names vncPerInstance, not where a process learns it:
		 * without it there is no instance shape, so the world is flat. */
		if (!atomic_exchange(&told, true))
			nccom_info("bootstrap: %s unset: the flat bootstrap", ENV_BOOTSTRAP_PER_INSTANCE);
		return NRT_SUCCESS;
	}
	char *end = NULL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != 0 || s[0] < '0' || s[0] > '9' || v < 1 || v > BOOTSTRAP_PER_INSTANCE_MAX) {
		char shown[NCCOM_ESCAPED_SIZE(32)];
		nccom_warn("bootstrap: %s=\"%s\" is not a number of ranks per instance in 1..%d: set it to the ranks of one instance, or unset it for the flat bootstrap",
			   ENV_BOOTSTRAP_PER_INSTANCE, nccom_escape(s, strnlen(s, 64), shown, sizeof shown), BOOTSTRAP_PER_INSTANCE_MAX);
		return NRT_INVALID;
	}
	*L = (int)v;
	return NRT_SUCCESS;
}

bool nccom_hierarchical(bool global, int nranks, int L)
{
	return global && L > 0 && nranks > L;
}

bool nccom_fault(const char *name)
{
#ifdef NCCOM_REF_FAULTS
	const char *f = getenv("NRTABI_NCCOM_FAULT");
	return f != NULL && strcmp(f, name) == 0;
#else
	(void)name;
	return false;
#endif
}
