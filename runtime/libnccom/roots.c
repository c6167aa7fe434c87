/*
 * Multi-root scalable init, the rule and the split
 * (docs/bootstrap-hierarchy.md#multi-root-how-many-roots,
 * docs/bootstrap-hierarchy.md#multi-root-range-assignment): R roots from
 * NRTABI_BOOTSTRAP_ROOTS, each serving a contiguous range of units —
 * ranks on a flat world, whole instances of L on a hierarchical one — the
 * first U % R roots one unit more. runtime/transport/tcp's RootsFor,
 * RootRange and RootOf are the same arithmetic.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccom.h"

static int unit_size(bool global, int n, int L) { return nccom_hierarchical(global, n, L) ? L : 1; }
static int units(int n, int u) { return (n + u - 1) / u; }

void nccom_root_range(int i, int R, int n, int L, bool global, int *lo, int *hi)
{
	int u = unit_size(global, n, L), nu = units(n, u), q = nu / R, m = nu % R;
	int ulo = i * q + (i < m ? i : m), cnt = q + (i < m);
	*lo = ulo * u;
	*hi = (ulo + cnt) * u < n ? (ulo + cnt) * u : n;
}

int nccom_root_of(int rank, int R, int n, int L, bool global)
{
	int u = unit_size(global, n, L), nu = units(n, u), q = nu / R, m = nu % R, unit = rank / u;
	if (unit < m * (q + 1))
		return unit / (q + 1);
	return m + (unit - m * (q + 1)) / q;
}

NRT_STATUS nccom_roots_check(int R, int n, int L, bool global)
{
	int u = unit_size(global, n, L), nu = units(n, u);
	if (R < 1 || R > nu) {
		char kind[48] = "ranks";
		if (u > 1)
			snprintf(kind, sizeof kind, "instances of %d", u);
		nccom_warn("bootstrap: %s names %d roots; a world of %d ranks (%d %s) has 1..%d, each serving at least one of them", ENV_BOOTSTRAP_ROOTS, R, n, nu, kind,
			   nu);
		return NRT_INVALID;
	}
	return NRT_SUCCESS;
}

void nccom_roots_free(struct nccom_roots *r)
{
	free(r->addr);
	*r = (struct nccom_roots){0};
}

NRT_STATUS nccom_roots_get(struct nccom_roots *out)
{
	*out = (struct nccom_roots){0};
	const char *s = getenv(ENV_BOOTSTRAP_ROOTS);
	if (s == NULL || *s == 0)
		return NRT_SUCCESS;
	/* Bounded: at most one root per rank of the largest world, each
	 * "[v6]:port" at most 64 bytes. */
	size_t len = strnlen(s, (size_t)BOOTSTRAP_MAX_RANKS * 64 + 1);
	if (len > (size_t)BOOTSTRAP_MAX_RANKS * 64) {
		nccom_warn("bootstrap: %s is longer than %d roots can be", ENV_BOOTSTRAP_ROOTS, BOOTSTRAP_MAX_RANKS);
		return NRT_INVALID;
	}
	int count = 1;
	for (size_t i = 0; i < len; i++)
		count += s[i] == ',';
	if (count > BOOTSTRAP_MAX_RANKS) {
		nccom_warn("bootstrap: %s names %d roots, more than the largest world has ranks (%d)", ENV_BOOTSTRAP_ROOTS, count, BOOTSTRAP_MAX_RANKS);
		return NRT_INVALID;
	}
	out->addr = calloc((size_t)count, sizeof *out->addr);
	if (out->addr == NULL)
		return NRT_FAIL_HOST_MEM_ALLOC;
	const char *p = s;
	for (int i = 0; i < count; i++) {
		const char *e = strchr(p, ',');
		size_t n = e != NULL ? (size_t)(e - p) : strlen(p);
		char one[80];
		if (n >= sizeof one || (memcpy(one, p, n), one[n] = 0, !nccom_parse_addr(one, &out->addr[i]))) {
			char shown[NCCOM_ESCAPED_SIZE(64)];
			nccom_warn("bootstrap: %s: root %d \"%s\" is not <ip>:<port>: give every root as ip:port, comma-separated, in root order", ENV_BOOTSTRAP_ROOTS, i,
				   nccom_escape(p, n < 64 ? n : 64, shown, sizeof shown));
			nccom_roots_free(out);
			return NRT_INVALID;
		}
		p += n + 1;
	}
	out->n = count;
	return NRT_SUCCESS;
}
