/*
 *   nethost RANK NRANKS ROOT_ID
 *
 * Environment: NRTABI_NETHOST_MIB (per peer and direction through the
 * entry points, default 64), NRTABI_NETHOST_PROXY_MIB (through the proxy,
 * default 8), NRTABI_NETHOST_CHUNK_KIB (message size, default 4096),
 * NRTABI_NETHOST_DEADLINE (seconds for everything, default 60),
 * NRTABI_NETHOST_VANISH (leave after that many rounds: the peer-vanishes
 * fault). Prints one report line and exits 0, or one failure line and 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nrtabi.h"
#include "nrtabi_runtime.h"
#include "nethost.h"

static const struct world *current;

/* The plugin member a 1:1 net entry point forwards to (neuronNetIsend ->
 * isend, neuronNetRegMrOG -> regMr), or "-" for the others (the proxy's
 * calls among them: libnccom's WARN line names the member and connector). */
static void member_of(const char *entry, char *out, size_t n)
{
	const char *prefix = "neuronNet";
	size_t len = strlen(entry);
	if (strncmp(entry, prefix, strlen(prefix)) != 0 || strncmp(entry, "neuronNetwork", 13) == 0 || len == strlen(prefix) || n < 2) {
		snprintf(out, n, "-");
		return;
	}
	snprintf(out, n, "%s", entry + strlen(prefix));
	size_t m = strlen(out);
	if (m > 2 && strcmp(out + m - 2, "OG") == 0)
		out[m - 2] = 0;
	if (out[0] >= 'A' && out[0] <= 'Z')
		out[0] = (char)(out[0] - 'A' + 'a');
}

_Noreturn void fail(const struct world *w, const char *entry, int status, int peer, const char *what)
{
	char net[512] = "", member[64];
	int err = 0;
	if (nrt_get_libnccl_net(&err, net, sizeof net) != NULL)
		snprintf(net, sizeof net, "%s", getenv("NRTABI_NET_PLUGIN") ? getenv("NRTABI_NET_PLUGIN") : NCCOM_NET_LIBRARY);
	member_of(entry, member, sizeof member);
	printf("nethost: rank %d: %s (plugin member %s): status %d, peer %d: %s (plugin %s)\n", w ? w->rank : -1, entry, member, status,
	       peer, what, net);
	fflush(stdout);
	exit(1);
}

double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int past(const struct world *w) { return now() > w->deadline; }

static uint64_t word(int src, int dst, int round, size_t i)
{
	uint64_t x = ((uint64_t)(src & 0xff) << 56) ^ ((uint64_t)(dst & 0xff) << 48) ^ ((uint64_t)(round & 0xffff) << 32) ^ (uint64_t)i;
	x *= 0x9E3779B97F4A7C15ull;
	return x ^ (x >> 29);
}

void fill(unsigned char *p, size_t n, int src, int dst, int round)
{
	for (size_t i = 0; i + 8 <= n; i += 8) {
		uint64_t v = word(src, dst, round, i / 8);
		memcpy(p + i, &v, 8);
	}
	for (size_t i = n & ~(size_t)7; i < n; i++)
		p[i] = (unsigned char)word(src, dst, round, i);
}

long mismatch(const unsigned char *p, size_t n, int src, int dst, int round)
{
	for (size_t i = 0; i + 8 <= n; i += 8) {
		uint64_t v = word(src, dst, round, i / 8);
		if (memcmp(p + i, &v, 8) != 0)
			return (long)i;
	}
	for (size_t i = n & ~(size_t)7; i < n; i++)
		if (p[i] != (unsigned char)word(src, dst, round, i))
			return (long)i;
	return -1;
}

static long env_num(const char *name, long def, long lo, long hi)
{
	const char *s = getenv(name);
	if (s == NULL || *s == 0)
		return def;
	char *end = NULL;
	long v = strtol(s, &end, 10);
	if (end == s || *end != 0 || v < lo || v > hi) {
		fprintf(stderr, "nethost: %s=%s is not a number in %ld..%ld\n", name, s, lo, hi);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static struct world w;
	current = &w;
	if (argc != 4) {
		fprintf(stderr, "usage: nethost RANK NRANKS ROOT_ID\n");
		return 2;
	}
	char *end = NULL;
	w.rank = (int)strtol(argv[1], &end, 10);
	w.nranks = (int)strtol(argv[2], &end, 10);
	if (w.nranks < 2 || w.nranks > 64 || w.rank < 0 || w.rank >= w.nranks) {
		fprintf(stderr, "nethost: rank %s of %s is not a rank of a world of 2..64\n", argv[1], argv[2]);
		return 2;
	}
	long mib = env_num("NRTABI_NETHOST_MIB", 64, 0, 4096);
	long pmib = env_num("NRTABI_NETHOST_PROXY_MIB", 8, 0, 4096);
	long kib = env_num("NRTABI_NETHOST_CHUNK_KIB", 4096, 4, 1 << 20);
	w.deadline = now() + (double)env_num("NRTABI_NETHOST_DEADLINE", 60, 1, 3600);
	w.vanish_round = (int)env_num("NRTABI_NETHOST_VANISH", 0, 0, 1 << 20);
	w.chunk = (size_t)kib << 10;
	w.rounds = (int)(((size_t)mib << 20) / w.chunk);
	w.proxy_entries = (int)(((size_t)pmib << 20) / w.chunk);

	uint32_t st = nrtabi_init(NULL, NULL);
	if (st != NRT_SUCCESS)
		fail(&w, "nrtabi_init", (int)st, -1, "the forward handoff failed");
	if ((st = nrtabi_trampolines(&w.t, sizeof w.t)) != NRT_SUCCESS)
		fail(&w, "nrtabi_trampolines", (int)st, -1, "no trampoline table");
	NRT_STATUS rc = w.t.neuronInitNet(argv[3]);
	if (rc != NRT_SUCCESS)
		fail(&w, "neuronInitNet", rc, -1, "the net plugin did not initialise");
	enc_neuron_device_info_t dev;
	memset(&dev, 0, sizeof dev);
	if ((rc = w.t.neuronInitGlobalComm(w.rank, w.nranks, &dev, argv[3], &w.comm, "nethost")) != NRT_SUCCESS)
		fail(&w, "neuronInitGlobalComm", rc, 0, "global comm init failed");
	double t0 = now();
	run_direct(&w);
	double t1 = now();
	run_proxy(&w);
	double t2 = now();
	void *table = NULL;
	if ((rc = w.t.neuronGetOFIHandle(&table)) != NRT_SUCCESS || table == NULL)
		fail(&w, "neuronGetOFIHandle", rc, -1, "no plugin table");
	/* Every table version starts with its name: the plugin's bytes, so only
	 * printable ASCII of at most 64 of them reaches the report. */
	const char *raw = *(const char *const *)table;
	char name[65] = "?";
	for (size_t i = 0; raw != NULL && raw[i] != 0 && i < sizeof name - 1; i++) {
		name[i] = raw[i] >= 0x20 && raw[i] < 0x7f && raw[i] != '"' ? raw[i] : '?';
		name[i + 1] = 0;
	}
	if ((rc = w.t.neuronFreeComm(w.comm)) != NRT_SUCCESS)
		fail(&w, "neuronFreeComm", rc, -1, "the comm did not free");
	if ((rc = w.t.neuronFiniPlugin()) != NRT_SUCCESS)
		fail(&w, "neuronFiniPlugin", rc, -1, "the plugin did not finish");
	printf("rank=%d nranks=%d plugin=\"%s\" sent=%llu received=%llu checked=%llu proxy_sent=%llu proxy_received=%llu direct_s=%.3f proxy_s=%.3f verdict=ok\n",
	       w.rank, w.nranks, name, (unsigned long long)w.sent, (unsigned long long)w.received,
	       (unsigned long long)w.checked, (unsigned long long)w.proxy_sent, (unsigned long long)w.proxy_received, t1 - t0, t2 - t1);
	return 0;
}
