/*
 * A host of the reference libnccom's net entry points, for the net-plugin
 * tests (runtime/netplugin/nettest): every byte it receives is checked against the
 * pattern its sender wrote.
 *
 *   nethost recv SIZE              listen, print "handle <hex>", accept, receive SIZE bytes
 *   nethost send SIZE HEX          connect to that handle, send SIZE bytes
 *   nethost misc                   NIC preference, affinity, fini twice
 *   nethost world RANK N ROOT SIZE a global comm; ring and mesh connectors;
 *                                  one proxy op list: SIZE bytes to the ring's
 *                                  next and SIZE/4 to every mesh peer
 *
 * NETHOST_BADFIFO=1: a world rank first starts four malformed proxy lists.
 * NETHOST_LEAVE_MR=1: the pair closes its comm with its registration left.
 * NETHOST_VANISH=1: a sender (or world rank 1) exits mid-transfer, without
 * closing anything. Prints "table vN", "moved <bytes>", "live_mrs <n>";
 * exits 0 when every call succeeded and every byte was right, 1 otherwise
 * (the failed call's line is libnccom's, on stderr).
 */
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nrtabi.h"

#define CHUNK (4 << 20)
#define DEADLINE_S 30

static bool vanish;

/* The transfers of a proxy list not yet complete: a rank that vanishes
 * while one is left has not sent all its peer waits for, so the peer
 * cannot finish, however fast the rest went. */
static int sends_left(const net_src_addr_t *src, int ns)
{
	int left = 0;
	for (int i = 0; i < ns; i++)
		if (src[i].mark == NET_TRANSFER && !src[i].complete)
			left++;
	return left;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned char pat(int from, int to, size_t off)
{
	return (unsigned char)(from * 131 + to * 29 + off * 7 + (off >> 13));
}

static void fill(unsigned char *b, size_t n, int from, int to)
{
	for (size_t i = 0; i < n; i++)
		b[i] = pat(from, to, i);
}

static bool check(const unsigned char *b, size_t n, int from, int to)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != pat(from, to, i)) {
			printf("mismatch from %d to %d at byte %zu: %u, not %u\n", from, to, i, b[i], pat(from, to, i));
			return false;
		}
	return true;
}

#define CALL(x)                                                         \
	do {                                                            \
		NRT_STATUS rc_ = (x);                                   \
		if (rc_ != NRT_SUCCESS) {                               \
			printf("failed %s = %d\n", #x, (int)rc_);       \
			return 1;                                       \
		}                                                       \
	} while (0)

static void *plugin_handle(void)
{
	const char *p = getenv("NRTABI_NET_PLUGIN");
	return p ? dlopen(p, RTLD_NOW | RTLD_NOLOAD) : NULL;
}

static void print_table(void)
{
	void *t = NULL, *h = plugin_handle();
	if (neuronGetOFIHandle(&t) != NRT_SUCCESS || h == NULL) {
		printf("table ?\n");
		return;
	}
	const char *names[] = {NCCL_NET_PLUGIN_V6_SYMBOL, NCCL_NET_PLUGIN_V5_SYMBOL, NCCL_NET_PLUGIN_V4_SYMBOL};
	for (int i = 0; i < 3; i++)
		if (dlsym(h, names[i]) == t)
			printf("table v%d\n", 6 - i);
}

static void print_live(void)
{
	void *h = plugin_handle();
	int (*live)(void) = h ? (int (*)(void))dlsym(h, "nrtabi_netplugin_live_mrs") : NULL;
	printf("live_mrs %d\n", live ? live() : -1);
}

/* Test until done, within the deadline. */
static int wait_req(void *req, int *size)
{
	double end = now() + DEADLINE_S;
	int done = 0;
	while (!done) {
		CALL(neuronNetTest(req, &done, size));
		if (!done && now() > end) {
			printf("request not done within %d s\n", DEADLINE_S);
			return 1;
		}
	}
	return 0;
}

static int pair(bool is_send, size_t size, const char *hex)
{
	CALL(neuronInitNet(NULL));
	print_table();
	unsigned char handle[NCCL_NET_HANDLE_MAXSIZE] = {0};
	void *lc = NULL, *comm = NULL;
	double end = now() + DEADLINE_S;
	if (!is_send) {
		CALL(neuronNetListen(0, handle, &lc));
		printf("handle ");
		for (size_t i = 0; i < sizeof handle; i++)
			printf("%02x", handle[i]);
		printf("\n");
		fflush(stdout);
		while (comm == NULL) {
			CALL(neuronNetAccept(lc, &comm));
			if (comm == NULL && now() > end) {
				printf("accept: no peer within %d s\n", DEADLINE_S);
				return 1;
			}
		}
	} else {
		for (size_t i = 0; i < sizeof handle && hex[2 * i] && hex[2 * i + 1]; i++)
			if (sscanf(hex + 2 * i, "%2hhx", &handle[i]) != 1)
				return 2;
		while (comm == NULL) {
			CALL(neuronNetConnect(0, handle, &comm));
			if (comm == NULL && now() > end)
				return 1;
		}
	}
	unsigned char *buf = malloc(size);
	if (buf == NULL)
		return 1;
	if (is_send)
		fill(buf, size, 0, 1);
	else
		memset(buf, 0, size);
	void *mh = NULL;
	CALL(neuronNetRegMrOG(comm, buf, size, NCCL_PTR_HOST, &mh));
	uint64_t key = 0;
	if (neuronNetGetMrKey(mh, &key) == NRT_SUCCESS)
		printf("mrkey %llu\n", (unsigned long long)key);
	else
		printf("mrkey none\n"); /* a v4 table has no getMrKey */
	size_t moved = 0;
	for (size_t off = 0; off < size; off += CHUNK) {
		int n = (int)(size - off < CHUNK ? size - off : CHUNK), got = 0;
		void *req = NULL;
		while (req == NULL) {
			if (is_send)
				CALL(neuronNetIsend(comm, buf + off, n, mh, &req));
			else
				CALL(neuronNetIrecv(comm, buf + off, n, mh, &req));
		}
		if (vanish && is_send && off >= size / 2)
			_exit(3); /* mid-transfer, nothing closed */
		if (wait_req(req, &got) != 0)
			return 1;
		if (!is_send && got != n) {
			printf("received %d of %d bytes\n", got, n);
			return 1;
		}
		moved += (size_t)got;
	}
	if (!is_send) {
		void *freq = NULL;
		CALL(neuronNetIflush(comm, buf, (int)(size < CHUNK ? size : CHUNK), mh, &freq));
		if (freq != NULL && wait_req(freq, &(int){0}) != 0)
			return 1;
		if (!check(buf, size, 0, 1))
			return 1;
	}
	if (getenv("NETHOST_LEAVE_MR") == NULL)
		CALL(neuronNetDeregMrOG(comm, mh));
	else
		printf("dereg-foreign %d\n", (int)neuronNetDeregMrOG(comm, buf)); /* not a registration */
	CALL(is_send ? neuronNetCloseSend(comm) : neuronNetCloseRecv(comm));
	if (lc)
		CALL(neuronNetCloseListen(lc));
	print_live();
	CALL(neuronFiniPlugin());
	free(buf);
	printf("moved %zu\n", moved);
	return 0;
}

/* One world rank's proxy list: op 0 the ring (SIZE bytes to next, from
 * prev), op 1 the mesh (SIZE/4 to and from every peer). */
static int world(int rank, int n, const char *root, size_t size)
{
	CALL(neuronInitNet((char *)root));
	print_table();
	enc_neuron_device_info_t dev;
	memset(&dev, 0, sizeof dev);
	void *comm = NULL;
	CALL(neuronInitGlobalComm(rank, n, &dev, root, &comm, "nethost"));
	CALL(neuronExpandConnectivity(comm, ENC_CONNECTIVITY_DEFAULT));
	CALL(neuronExpandConnectivity(comm, ENC_CONNECTIVITY_MESH));
	int next = (rank + 1) % n, prev = (rank + n - 1) % n;
	void *conn = NULL;
	CALL(neuronGetNetConnector(comm, ENC_PATTERN_RING, next, true, &conn));
	size_t msize = size / 4;
	int peers = n - 1;
	/* buffers: [0] ring send, [1] ring recv, then per peer p: send, recv */
	int nb = 2 + 2 * n;
	unsigned char **buf = calloc((size_t)nb, sizeof *buf);
	void **mh = calloc((size_t)nb, sizeof *mh);
	if (!buf || !mh)
		return 1;
	buf[0] = malloc(size), buf[1] = calloc(1, size);
	if (!buf[0] || !buf[1])
		return 1;
	fill(buf[0], size, rank, next);
	CALL(neuronNetRegMr(comm, ENC_PATTERN_RING, next, true, NET_SEND_COMM, buf[0], size, NCCL_PTR_HOST, &mh[0]));
	CALL(neuronNetRegMr(comm, ENC_PATTERN_RING, prev, false, NET_RECV_COMM, buf[1], size, NCCL_PTR_HOST, &mh[1]));
	for (int p = 0; p < n; p++) {
		if (p == rank)
			continue;
		buf[2 + 2 * p] = malloc(msize), buf[3 + 2 * p] = calloc(1, msize);
		if (!buf[2 + 2 * p] || !buf[3 + 2 * p])
			return 1;
		fill(buf[2 + 2 * p], msize, rank + 100, p);
		CALL(neuronNetRegMr(comm, ENC_PATTERN_MESH, p, true, NET_SEND_COMM, buf[2 + 2 * p], msize, NCCL_PTR_HOST, &mh[2 + 2 * p]));
		CALL(neuronNetRegMr(comm, ENC_PATTERN_MESH, p, false, NET_RECV_COMM, buf[3 + 2 * p], msize, NCCL_PTR_HOST, &mh[3 + 2 * p]));
	}
	size_t rchunks = (size + CHUNK - 1) / CHUNK, mchunks = (msize + CHUNK - 1) / CHUNK;
	int cap = (int)(rchunks + (size_t)peers * mchunks + 3);
	net_src_addr_t *src = calloc((size_t)cap, sizeof *src);
	net_dest_addr_t *dst = calloc((size_t)cap, sizeof *dst);
	net_ops_info_t ops[2];
	uint32_t sem[4] = {0};
	memset(ops, 0, sizeof ops);
	ops[0].inc_send_complete = &sem[0], ops[0].inc_recv_complete = &sem[1];
	ops[1].inc_send_complete = &sem[2], ops[1].inc_recv_complete = &sem[3];
	if (!src || !dst)
		return 1;
	int ns = 0, nd = 0;
	for (size_t off = 0; off < size; off += CHUNK) {
		uint32_t k = (uint32_t)(size - off < CHUNK ? size - off : CHUNK);
		src[ns++] = (net_src_addr_t){.net_op_idx = 0, .host_addr = buf[0] + off, .nccl_mhandle = mh[0], .size = k, .mark = NET_TRANSFER, .dst_rank = -1};
		dst[nd++] = (net_dest_addr_t){.net_op_idx = 0, .host_addr = buf[1] + off, .nccl_mhandle = mh[1], .size = k, .mark = NET_TRANSFER, .src_rank = -1};
	}
	src[ns++] = (net_src_addr_t){.net_op_idx = 0, .mark = NET_OP_COMPLETE, .dst_rank = -1};
	dst[nd++] = (net_dest_addr_t){.net_op_idx = 0, .mark = NET_OP_COMPLETE, .src_rank = -1};
	for (int p = 0; p < n; p++) {
		if (p == rank)
			continue;
		for (size_t off = 0; off < msize; off += CHUNK) {
			uint32_t k = (uint32_t)(msize - off < CHUNK ? msize - off : CHUNK);
			src[ns++] = (net_src_addr_t){.net_op_idx = 1, .host_addr = buf[2 + 2 * p] + off, .nccl_mhandle = mh[2 + 2 * p], .size = k, .mark = NET_TRANSFER, .dst_rank = p};
			dst[nd++] = (net_dest_addr_t){.net_op_idx = 1, .host_addr = buf[3 + 2 * p] + off, .nccl_mhandle = mh[3 + 2 * p], .size = k, .mark = NET_TRANSFER, .src_rank = p};
		}
	}
	src[ns++] = (net_src_addr_t){.net_op_idx = 1, .mark = NET_OP_COMPLETE};
	dst[nd++] = (net_dest_addr_t){.net_op_idx = 1, .mark = NET_OP_COMPLETE};
	src[ns++] = (net_src_addr_t){.mark = EXEC_COMPLETE};
	dst[nd++] = (net_dest_addr_t){.mark = EXEC_COMPLETE};
	if (getenv("NETHOST_BADFIFO") != NULL) {
		/* Planted faults, each refused by name before anything moves. */
		net_src_addr_t keep = src[ns - 1];
		src[ns - 1].mark = NET_TRANSFER; /* no EXEC_COMPLETE at the end */
		printf("badfifo end %d\n", (int)neuronStartNetworkProxy(comm, 0, 1, ops, 2, src, ns, dst, nd));
		src[ns - 1] = keep;
		uint32_t op = src[0].net_op_idx;
		src[0].net_op_idx = 9; /* an op the list does not have */
		printf("badfifo op %d\n", (int)neuronStartNetworkProxy(comm, 0, 2, ops, 2, src, ns, dst, nd));
		src[0].net_op_idx = op;
		int peer = src[0].dst_rank;
		src[0].dst_rank = n + 5; /* a rank without a connector */
		printf("badfifo peer %d\n", (int)neuronStartNetworkProxy(comm, 0, 3, ops, 2, src, ns, dst, nd));
		src[0].dst_rank = peer;
		printf("badfifo stream %d\n", (int)neuronStartNetworkProxy(comm, NCCOM_PROXY_STREAMS, 4, ops, 2, src, ns, dst, nd));
		void *mh0 = src[0].nccl_mhandle;
		src[0].nccl_mhandle = mh[1]; /* the ring's receive registration, not its send */
		printf("badfifo mhandle %d\n", (int)neuronStartNetworkProxy(comm, 0, 5, ops, 2, src, ns, dst, nd));
		src[0].nccl_mhandle = mh0;
	}
	CALL(neuronStartNetworkProxy(comm, 0, 7, ops, 2, src, ns, dst, nd));
	double end = now() + DEADLINE_S;
	while (!src[ns - 1].complete || !dst[nd - 1].complete) {
		bool progressed = false, failed = false;
		NRT_STATUS rc = neuronNetworkProxyProgress(comm, 0, 7, &progressed, &failed);
		if (rc != NRT_SUCCESS || failed) {
			/* The failure was libnccom's one line; what it holds goes
			 * with the comm, registrations first. */
			printf("proxy failed (status %d)\n", (int)rc);
			printf("stop %d\n", (int)neuronStopNetworkProxy(comm, 0));
			printf("free %d\n", (int)neuronFreeComm(comm));
			print_live();
			return 1;
		}
		if (vanish && rank == 1 && src[0].complete && sends_left(src, ns) > 0)
			_exit(3); /* mid-transfer, nothing closed, before its last byte is out */
		if (now() > end) {
			printf("proxy not done within %d s\n", DEADLINE_S);
			return 1;
		}
	}
	CALL(neuronStopNetworkProxy(comm, 0));
	if (sem[0] != 1 || sem[1] != 1 || sem[2] != 1 || sem[3] != 1) {
		printf("semaphores %u %u %u %u, not 1 each\n", sem[0], sem[1], sem[2], sem[3]);
		return 1;
	}
	size_t moved = size;
	if (!check(buf[1], size, prev, rank))
		return 1;
	for (int p = 0; p < n; p++)
		if (p != rank) {
			if (!check(buf[3 + 2 * p], msize, p + 100, rank))
				return 1;
			moved += msize;
		}
	CALL(neuronNetDeregMr(comm, ENC_PATTERN_RING, next, true, NET_SEND_COMM, mh[0]));
	CALL(neuronNetDeregMr(comm, ENC_PATTERN_RING, prev, false, NET_RECV_COMM, mh[1]));
	/* The mesh registrations are left to neuronFreeComm, which releases
	 * them with their connectors. */
	CALL(neuronFreeComm(comm));
	print_live();
	CALL(neuronFiniPlugin());
	printf("moved %zu\n", moved);
	for (int i = 0; i < nb; i++)
		free(buf[i]);
	free(buf), free(mh), free(src), free(dst);
	return 0;
}

/* The entry points beside the data path: NIC preference and affinity. */
static int misc(void)
{
	CALL(neuronInitNet(NULL));
	int nic = -1;
	CALL(neuronPreferredNcRidNic(3, 5, &nic));
	printf("nic %d\n", nic);
	char bdf[64];
	printf("bdf %d\n", (int)neuronPreferredNcRidNicBdf(3, 5, bdf, sizeof bdf)); /* the double has no PCI address */
	cpu_set_t before, save, now_set, back;
	if (sched_getaffinity(0, sizeof before, &before) != 0)
		return 1;
	CALL(neuronSetAffinity(NULL, NULL, &save, 1));
	if (sched_getaffinity(0, sizeof now_set, &now_set) != 0)
		return 1;
	printf("pinned %d of %d saved %d\n", CPU_COUNT(&now_set), CPU_COUNT(&before), CPU_COUNT(&save));
	CALL(neuronSetAffinity(NULL, &save, &back, -1));
	if (sched_getaffinity(0, sizeof now_set, &now_set) != 0)
		return 1;
	printf("restored %d\n", CPU_EQUAL(&now_set, &before));
	CALL(neuronFiniPlugin());
	printf("fini-again %d\n", (int)neuronFiniPlugin());
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	vanish = getenv("NETHOST_VANISH") != NULL;
	if (argc == 3 && strcmp(argv[1], "recv") == 0)
		return pair(false, strtoull(argv[2], NULL, 10), NULL);
	if (argc == 4 && strcmp(argv[1], "send") == 0)
		return pair(true, strtoull(argv[2], NULL, 10), argv[3]);
	if (argc == 2 && strcmp(argv[1], "misc") == 0)
		return misc();
	if (argc == 6 && strcmp(argv[1], "world") == 0)
		return world(atoi(argv[2]), atoi(argv[3]), argv[4], strtoull(argv[5], NULL, 10));
	fprintf(stderr, "usage: nethost recv SIZE | send SIZE HEX | world RANK N ROOT SIZE\n");
	return 2;
}
