/*
 * The net benchmark's two ends (bench/net): rank 0 sends, rank 1 receives,
 * each message size in turn, up to WINDOW messages in flight; rank 1 prints
 * "size=S bytes=B secs=T" per size. Three paths between the same two
 * network namespaces:
 *
 *   netbench stack  RANK ROOT_ID     libnrt's trampolines -> libnccom -> the plugin
 *   netbench direct RANK PEER_ADDR   the plugin's ncclNetPlugin_v6 table called directly
 *   netbench tcp    RANK PEER_ADDR   plain TCP sockets
 *   netbench calls  ROOT_ID N        ns per call: trampoline vs the libnccom entry point
 *
 * Sizes and bytes per size: NETBENCH_SIZES (KiB, comma separated) and
 * NETBENCH_MIB. Not a test: no byte is checked here (runtime/e2e checks
 * every byte on the same paths).
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "nrtabi.h"
#include "nrtabi_runtime.h"
#include "nrt_slots.h"

enum { WINDOW = 4, OOB_PORT = 29700, MAX_SIZES = 32 };

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static _Noreturn void die(const char *what, long rc)
{
	fprintf(stderr, "netbench: %s: %ld\n", what, rc);
	exit(1);
}

static size_t sizes[MAX_SIZES];
static int nsizes;
static size_t total_bytes;

static void parse_env(void)
{
	const char *s = getenv("NETBENCH_SIZES");
	char buf[512];
	snprintf(buf, sizeof buf, "%s", s ? s : "4,64,1024,4096,16384,65536");
	for (char *tok = strtok(buf, ","); tok && nsizes < MAX_SIZES; tok = strtok(NULL, ","))
		sizes[nsizes++] = (size_t)strtoul(tok, NULL, 10) << 10;
	const char *m = getenv("NETBENCH_MIB");
	total_bytes = (size_t)(m ? strtoul(m, NULL, 10) : 256) << 20;
}

static size_t max_size(void)
{
	size_t m = 0;
	for (int i = 0; i < nsizes; i++)
		m = sizes[i] > m ? sizes[i] : m;
	return m;
}

/* ---- one transport: post / test, whichever path carries it ------------- */
struct path {
	void *comm, *mh;
	NRT_STATUS (*post)(struct path *, void *buf, int size, void **req);
	int (*test)(struct path *, void *req); /* 1 done, 0 not yet */
	int sender;
	/* direct */
	const ncclNet_v6_t *v6;
	/* stack */
	struct nrt_nccl_slots *t;
};

static void stream(struct path *p, unsigned char *buf)
{
	for (int i = 0; i < nsizes; i++) {
		size_t s = sizes[i];
		long count = (long)(total_bytes / s);
		if (count < 8)
			count = 8;
		void *reqs[WINDOW] = {0};
		long posted = 0, done = 0;
		double t0 = now();
		while (done < count) {
			for (int w = 0; w < WINDOW; w++) {
				if (reqs[w] == NULL && posted < count) {
					void *r = NULL;
					if (p->post(p, buf, (int)s, &r) != NRT_SUCCESS)
						die("post", (long)s);
					if (r != NULL)
						reqs[w] = r, posted++;
				}
				if (reqs[w] != NULL && p->test(p, reqs[w]))
					reqs[w] = NULL, done++;
			}
		}
		double secs = now() - t0;
		if (!p->sender)
			printf("size=%zu bytes=%zu secs=%.6f\n", s, (size_t)count * s, secs);
		fflush(stdout);
	}
}

/* ---- the stack: libnrt's trampolines ----------------------------------- */
static NRT_STATUS stack_post(struct path *p, void *buf, int size, void **req)
{
	return p->sender ? p->t->neuronNetIsend(p->comm, buf, size, p->mh, req) : p->t->neuronNetIrecv(p->comm, buf, size, p->mh, req);
}
static int stack_test(struct path *p, void *req)
{
	int done = 0, size = 0;
	if (p->t->neuronNetTest(req, &done, &size) != NRT_SUCCESS)
		die("neuronNetTest", 0);
	return done;
}

static struct nrt_nccl_slots T;

static void *stack_init(const char *root, int rank, int nranks)
{
	if (nrtabi_init(NULL, NULL) != NRT_SUCCESS || nrtabi_trampolines(&T, sizeof T) != NRT_SUCCESS)
		die("nrtabi_init", 0);
	NRT_STATUS rc = T.neuronInitNet((char *)root);
	if (rc != NRT_SUCCESS)
		die("neuronInitNet", rc);
	enc_neuron_device_info_t dev;
	memset(&dev, 0, sizeof dev);
	void *comm = NULL;
	if ((rc = T.neuronInitGlobalComm(rank, nranks, &dev, root, &comm, "netbench")) != NRT_SUCCESS)
		die("neuronInitGlobalComm", rc);
	return comm;
}

static void run_stack(int rank, const char *root)
{
	void *g = stack_init(root, rank, 2);
	unsigned char handle[NCCL_NET_HANDLE_MAXSIZE] = {0};
	void *lc = NULL, *c = NULL;
	NRT_STATUS rc;
	struct path p = {.t = &T, .sender = rank == 0, .post = stack_post, .test = stack_test};
	if (rank == 1) {
		if ((rc = T.neuronNetListen(0, handle, &lc)) != NRT_SUCCESS)
			die("neuronNetListen", rc);
		if ((rc = T.neuronBootstrapSend(g, 0, handle, sizeof handle, "netbench")) != NRT_SUCCESS)
			die("neuronBootstrapSend", rc);
		while (c == NULL)
			if ((rc = T.neuronNetAccept(lc, &c)) != NRT_SUCCESS)
				die("neuronNetAccept", rc);
	} else {
		if ((rc = T.neuronBootstrapRecv(g, 1, handle, sizeof handle, "netbench")) != NRT_SUCCESS)
			die("neuronBootstrapRecv", rc);
		while (c == NULL)
			if ((rc = T.neuronNetConnect(0, handle, &c)) != NRT_SUCCESS)
				die("neuronNetConnect", rc);
	}
	size_t m = max_size();
	unsigned char *buf = aligned_alloc(4096, m);
	memset(buf, 0x5a, m);
	p.comm = c;
	if ((rc = T.neuronNetRegMrOG(c, buf, m, NCCL_PTR_HOST, &p.mh)) != NRT_SUCCESS)
		die("neuronNetRegMrOG", rc);
	stream(&p, buf);
	/* the end: one byte back, so the sender does not close early */
	char b = 0;
	if (rank == 1)
		rc = T.neuronBootstrapSend(g, 0, &b, 1, "netbench");
	else
		rc = T.neuronBootstrapRecv(g, 1, &b, 1, "netbench");
	if (rc != NRT_SUCCESS)
		die("the closing handshake", rc);
}

/* ---- the plugin called directly --------------------------------------- */
static void logger(int level, unsigned long flags, const char *file, int line, const char *fmt, ...)
{
	(void)level, (void)flags, (void)file, (void)line, (void)fmt;
}

static NRT_STATUS direct_post(struct path *p, void *buf, int size, void **req)
{
	int tag = 0;
	ncclResult_t r = p->sender ? ((ncclResult_t(*)(void *, void *, int, int, void *, void **))p->v6->isend)(p->comm, buf, size, 0, p->mh, req)
				   : ((ncclResult_t(*)(void *, int, void **, int *, int *, void **, void **))p->v6->irecv)(p->comm, 1, &buf, &size, &tag, &p->mh, req);
	return r == ncclSuccess ? NRT_SUCCESS : NRT_FAILURE;
}
static int direct_test(struct path *p, void *req)
{
	int done = 0, size = 0;
	if (((ncclResult_t(*)(void *, int *, int *))p->v6->test)(req, &done, &size) != ncclSuccess)
		die("test", 0);
	return done;
}

/* A TCP connection between the two ranks: rank 1 listens on addr. */
static int oob(int rank, const char *addr)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(OOB_PORT)};
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		die("inet_pton", 0);
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	if (fd < 0)
		die("socket", 0);
	if (rank == 1) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 1) != 0)
			die("bind", 0);
		int c = accept(fd, NULL, NULL);
		close(fd);
		fd = c;
	} else {
		for (int i = 0; connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0; i++) {
			if (i > 200)
				die("connect", 0);
			usleep(50000);
			close(fd);
			fd = socket(AF_INET, SOCK_STREAM, 0);
		}
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

static void full(int fd, void *b, size_t n, int out)
{
	for (size_t off = 0; off < n;) {
		ssize_t k = out ? write(fd, (char *)b + off, n - off) : read(fd, (char *)b + off, n - off);
		if (k <= 0)
			die(out ? "write" : "read", (long)k);
		off += (size_t)k;
	}
}

static void run_direct(int rank, const char *peer)
{
	const char *path = getenv("NRTABI_NET_PLUGIN");
	void *h = dlopen(path ? path : NCCOM_NET_LIBRARY, RTLD_NOW);
	if (h == NULL)
		die(dlerror(), 0);
	const ncclNet_v6_t *v6 = dlsym(h, "ncclNetPlugin_v6");
	if (v6 == NULL)
		die("no ncclNetPlugin_v6", 0);
	if (((ncclResult_t(*)(void *))v6->init)((void *)logger) != ncclSuccess)
		die("init", 0);
	int fd = oob(rank, peer);
	unsigned char handle[NCCL_NET_HANDLE_MAXSIZE] = {0};
	void *lc = NULL, *c = NULL;
	if (rank == 1) {
		if (((ncclResult_t(*)(int, void *, void **))v6->listen)(0, handle, &lc) != ncclSuccess)
			die("listen", 0);
		full(fd, handle, sizeof handle, 1);
		while (c == NULL)
			if (((ncclResult_t(*)(void *, void **))v6->accept)(lc, &c) != ncclSuccess)
				die("accept", 0);
	} else {
		full(fd, handle, sizeof handle, 0);
		while (c == NULL)
			if (((ncclResult_t(*)(int, void *, void **))v6->connect)(0, handle, &c) != ncclSuccess)
				die("connect", 0);
	}
	size_t m = max_size();
	unsigned char *buf = aligned_alloc(4096, m);
	memset(buf, 0x5a, m);
	struct path p = {.v6 = v6, .comm = c, .sender = rank == 0, .post = direct_post, .test = direct_test};
	if (((ncclResult_t(*)(void *, void *, size_t, int, void **))v6->regMr)(c, buf, m, NCCL_PTR_HOST, &p.mh) != ncclSuccess)
		die("regMr", 0);
	stream(&p, buf);
	char b = 0;
	full(fd, &b, 1, rank == 1);
	close(fd);
}

/* ---- plain TCP --------------------------------------------------------- */
static void run_tcp(int rank, const char *peer)
{
	int fd = oob(rank, peer);
	size_t m = max_size();
	unsigned char *buf = aligned_alloc(4096, m);
	memset(buf, 0x5a, m);
	for (int i = 0; i < nsizes; i++) {
		size_t s = sizes[i];
		long count = (long)(total_bytes / s);
		if (count < 8)
			count = 8;
		double t0 = now();
		for (long k = 0; k < count; k++)
			full(fd, buf, s, rank == 0);
		if (rank == 1)
			printf("size=%zu bytes=%zu secs=%.6f\n", s, (size_t)count * s, now() - t0);
		fflush(stdout);
	}
	char b = 0;
	full(fd, &b, 1, rank == 1);
	close(fd);
}

/* ---- per call: the trampoline vs the libnccom entry point ----------------
 * neuronGetOFIHandle after neuronInitNet (a guarded call that succeeds and
 * does no I/O), N calls each way, interleaved in 200 blocks. */
static void run_calls(const char *root, long n)
{
	if (nrtabi_init(NULL, NULL) != NRT_SUCCESS || nrtabi_trampolines(&T, sizeof T) != NRT_SUCCESS)
		die("nrtabi_init", 0);
	if (T.neuronInitNet((char *)root) != NRT_SUCCESS)
		die("neuronInitNet", 0);
	void *lib = dlopen(NCCOM_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
	neuronGetOFIHandle_fn direct = lib ? (neuronGetOFIHandle_fn)dlsym(lib, "neuronGetOFIHandle") : NULL;
	if (direct == NULL)
		die("dlsym neuronGetOFIHandle", 0);
	neuronGetOFIHandle_fn tramp = T.neuronGetOFIHandle;
	/* The fastest block of each: on a shared machine a block that lost the
	 * CPU says nothing about the call. */
	double tt = 1e30, td = 1e30;
	void *out = NULL;
	long per = n / 200;
	for (int block = 0; block < 200; block++) {
		double t0 = now();
		for (long i = 0; i < per; i++)
			if (tramp(&out) != NRT_SUCCESS)
				die("trampoline", 0);
		double t1 = now();
		for (long i = 0; i < per; i++)
			if (direct(&out) != NRT_SUCCESS)
				die("direct", 0);
		double t2 = now();
		tt = t1 - t0 < tt ? t1 - t0 : tt;
		td = t2 - t1 < td ? t2 - t1 : td;
	}
	printf("calls=%ld trampoline_ns=%.2f direct_ns=%.2f\n", n, tt * 1e9 / (double)per, td * 1e9 / (double)per);
}

int main(int argc, char **argv)
{
	parse_env();
	if (argc == 4 && strcmp(argv[1], "calls") == 0) {
		run_calls(argv[2], strtol(argv[3], NULL, 10));
		return 0;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: netbench stack|direct|tcp RANK ROOT_ID|PEER_ADDR | calls ROOT_ID N\n");
		return 2;
	}
	int rank = atoi(argv[2]);
	if (strcmp(argv[1], "stack") == 0)
		run_stack(rank, argv[3]);
	else if (strcmp(argv[1], "direct") == 0)
		run_direct(rank, argv[3]);
	else if (strcmp(argv[1], "tcp") == 0)
		run_tcp(rank, argv[3]);
	else
		die("unknown mode", 0);
	return 0;
}
