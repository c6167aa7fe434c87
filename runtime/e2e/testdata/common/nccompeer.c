/*
 * One rank of a global world through the reference libnccom's exports,
 * for the hostile-peer tests (hostilepeer_test.go): it joins the world,
 * prints its bootstrap listen address so a Go fake peer can reach it, then
 * either waits in a point-to-point receive or idles.
 *
 *   nccompeer RANK NRANKS ROOT_ID recv PEER   neuronBootstrapRecv from PEER
 *   nccompeer RANK NRANKS ROOT_ID idle SECS   hold the comm SECS seconds
 *
 * Prints "listen <addr>" once the world is formed and "status <n>" at the
 * end; exits 0 when every call succeeded, 1 otherwise.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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

/* The comm's bootstrap begins with the seed's extState (runtime/libnccom/nccom.h). */
static void print_listen(void *comm)
{
	const struct ncclComm *c = comm;
	const struct extState *st = c->bootstrap;
	struct sockaddr_in a;
	socklen_t len = sizeof a;
	char host[INET_ADDRSTRLEN] = "?";
	if (st == NULL || getsockname(st->extListenFd, (struct sockaddr *)&a, &len) != 0 || a.sin_family != AF_INET ||
	    inet_ntop(AF_INET, &a.sin_addr, host, sizeof host) == NULL) {
		printf("listen ?\n");
		return;
	}
	printf("listen %s:%u\n", host, ntohs(a.sin_port));
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	int rank = 0, nranks = 0, arg = 0;
	if (argc != 6 || number(argv[1], &rank) != 0 || number(argv[2], &nranks) != 0 || number(argv[5], &arg) != 0 ||
	    (strcmp(argv[4], "recv") != 0 && strcmp(argv[4], "idle") != 0)) {
		fprintf(stderr, "usage: nccompeer RANK NRANKS ROOT_ID recv PEER | idle SECS\n");
		return 2;
	}
	uint32_t st = nrtabi_init(NULL, NULL);
	if (st != NRT_SUCCESS) {
		fprintf(stderr, "nccompeer: nrtabi_init: status %u\n", st);
		return 1;
	}
	enc_neuron_device_info_t dev;
	memset(&dev, 0, sizeof dev);
	void *comm = NULL;
	NRT_STATUS rc = neuronInitGlobalComm(rank, nranks, &dev, argv[3], &comm, "nccompeer");
	if (rc != NRT_SUCCESS) {
		printf("status %d\n", (int)rc);
		return 1;
	}
	print_listen(comm);
	if (strcmp(argv[4], "recv") == 0) {
		char buf[8];
		rc = neuronBootstrapRecv(comm, arg, buf, sizeof buf, "nccompeer");
	} else {
		sleep((unsigned)arg);
	}
	printf("status %d\n", (int)rc);
	if (neuronFreeComm(comm) != NRT_SUCCESS)
		return 1;
	return rc == NRT_SUCCESS ? 0 : 1;
}
