/*
 * One rank of a world through the boundary: a C program linked against
 * nrtabi's libnrt.so.1, which dlopens the reference libnccom (the normal
 * search path, or LIBNCCOM) and runs global comm init over TCP and the
 * per-NC bootstrap over the ncclBootstrap* trampolines.
 *
 *   worldhost RANK NRANKS ROOT_ID [reordered]
 *
 * Prints the rank's report line; exits 0 when the rank agreed, 1 otherwise.
 * NRTABI_WORLDHOST_TOPOLOGY, when set, is the simulated-topology file libnrt
 * loads (a rank whose core 0 is another device: peerrecord_test.go).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nrtabi.h"
#include "nrtabi_runtime.h"

static int number(const char *s, int *out)
{
	char *end = NULL;
	long v = strtol(s, &end, 10);
	if (end == s || *end != 0 || v < 0 || v > 1 << 20)
		return -1;
	*out = (int)v;
	return 0;
}

int main(int argc, char **argv)
{
	int rank = 0, nranks = 0;
	if ((argc != 4 && argc != 5) || number(argv[1], &rank) != 0 || number(argv[2], &nranks) != 0 ||
	    (argc == 5 && strcmp(argv[4], "reordered") != 0)) {
		fprintf(stderr, "usage: worldhost RANK NRANKS ROOT_ID [reordered]\n");
		return 2;
	}
	uint32_t st = nrtabi_init(getenv("NRTABI_WORLDHOST_TOPOLOGY"), getenv("LIBNCCOM"));
	if (st != NRT_SUCCESS) {
		fprintf(stderr, "worldhost: nrtabi_init: status %u\n", st);
		return 1;
	}
	char line[2048];
	st = nrtabi_bootstrap_world(rank, nranks, argv[3], argc == 5, line, sizeof line);
	printf("%s\n", line);
	return st == NRT_SUCCESS ? 0 : 1;
}
