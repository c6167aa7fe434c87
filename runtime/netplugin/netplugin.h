/*
 * A net-plugin double of our own: a libnccom-net.so over TCP sockets that
 * exports ncclNetPlugin_v6, _v5 and _v4 in the layouts of the spec
 * (spec/2.31.24/net_plugin.toml, generated nrtabi.h), for the tests of the
 * reference libnccom's net entry points (docs/net-seam.md#the-double). It
 * binds only to 127.0.0.1, or to the IPv4 address NRTABI_NETPLUGIN_ADDR
 * names (an address inside a test's network namespace).
 *
 * Fault variants, from the same source by -D:
 *   NETPLUGIN_NO_V6, NETPLUGIN_NO_V5, NETPLUGIN_NO_V4   leave that table out
 *   NETPLUGIN_NULL_MEMBER=isend                         that member NULL in every table
 *   NETPLUGIN_FAIL_AFTER=N                              a send comm fails once N bytes went out
 */
#ifndef NETPLUGIN_H
#define NETPLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nrtabi.h"

typedef void (*np_logger)(int level, unsigned long flags, const char *file, int line, const char *fmt, ...);

/* The handle listen fills (NCCL_NET_HANDLE_MAXSIZE bytes, out of band);
 * v4's 64-byte handle holds the same first bytes. */
struct np_handle {
	uint32_t magic;
	uint16_t port; /* network order */
	uint16_t pad;
	uint32_t addr; /* IPv4, network order */
	uint32_t pad2;
	uint64_t nonce; /* the accepting side's check on who connected */
	/* connect's own state across its calls (the rest of the handle is the
	 * caller's memory, kept between calls as NCCL keeps it) */
	uint64_t pending;
};
_Static_assert(sizeof(struct np_handle) <= NCCL_NET_HANDLE_MAXSIZE_V4, "the handle fits v4's 64 bytes");
#define NP_MAGIC 0x6e727450u

struct np_req {
	struct np_comm *comm;
	bool used, done, is_send;
	char *buf;
	uint32_t size, got; /* posted size; bytes moved */
	uint32_t hdr;       /* the frame's length word */
	uint32_t hdr_off, off;
};

struct np_comm {
	int fd;
	bool is_send;
	uint64_t moved; /* payload bytes so far */
	struct np_req reqs[NCCL_NET_MAX_REQUESTS];
	int head, count; /* the FIFO of posted requests */
	bool broken;
};

struct np_listen {
	int fd;
	uint64_t nonce;
	int pending_fd; /* accepted, its nonce not yet read whole */
	unsigned char got[8];
	int got_n;
};

struct np_mr {
	uint32_t magic;
	void *data;
	size_t size;
	uint64_t key;
};
#define NP_MR_MAGIC 0x6d72746eu

extern np_logger np_log;
/* The double's detail goes to the host's logger at INFO (NCCL_LOG_INFO):
 * the one WARN line of a failure is libnccom's, naming plugin, member and
 * peer. */
#define NP_WARN(...)                                              \
	do {                                                      \
		if (np_log)                                       \
			np_log(3, 16, __FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

/* sock.c */
int np_bind_addr(uint32_t *addr);
int np_listen_socket(uint32_t addr, uint16_t *port);
int np_set_nonblock(int fd);

/* conn.c */
ncclResult_t np_init(np_logger log);
ncclResult_t np_fini(void);
ncclResult_t np_devices(int *n);
ncclResult_t np_properties(int dev, ncclNetProperties_v6_t *p);
ncclResult_t np_properties_v4(int dev, ncclNetProperties_v4_t *p);
ncclResult_t np_listen(int dev, void *handle, void **listen_comm);
ncclResult_t np_connect(int dev, void *handle, void **send_comm);
ncclResult_t np_accept(void *listen_comm, void **recv_comm);
ncclResult_t np_close_send(void *c);
ncclResult_t np_close_recv(void *c);
ncclResult_t np_close_listen(void *c);

/* xfer.c */
ncclResult_t np_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle);
ncclResult_t np_dereg_mr(void *comm, void *mhandle);
ncclResult_t np_get_mr_key(void *mhandle, uint64_t *key);
ncclResult_t np_isend(void *c, void *data, int size, void *mh, void **req);
ncclResult_t np_irecv(void *c, void *data, int size, void *mh, void **req);
ncclResult_t np_iflush(void *c, void *data, int size, void *mh, void **req);
ncclResult_t np_test(void *req, int *done, int *size);
/* Registrations not yet deregistered: a test's check that nothing was left. */
int nrtabi_netplugin_live_mrs(void);

#endif
