/* The double's connection setup: listen, connect, accept and close. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "netplugin.h"

np_logger np_log;
static uint32_t bind_addr;

ncclResult_t np_init(np_logger log)
{
	np_log = log;
	return np_bind_addr(&bind_addr) == 0 ? ncclSuccess : ncclInvalidArgument;
}

ncclResult_t np_fini(void) { return ncclSuccess; }

ncclResult_t np_devices(int *n)
{
	if (n == NULL)
		return ncclInvalidArgument;
	*n = 1;
	return ncclSuccess;
}

ncclResult_t np_properties(int dev, ncclNetProperties_v6_t *p)
{
	if (p == NULL || dev != 0)
		return ncclInvalidArgument;
	memset(p, 0, sizeof *p);
	p->name = (char *)"nrtabi-double";
	p->pciPath = NULL; /* a socket has no PCI function */
	p->ptrSupport = NCCL_PTR_HOST;
	p->speed = 10000;
	p->maxComms = 1024;
	p->maxRecvs = 1;
	return ncclSuccess;
}

ncclResult_t np_properties_v4(int dev, ncclNetProperties_v4_t *p)
{
	ncclNetProperties_v6_t p6;
	ncclResult_t rc = np_properties(dev, &p6);
	if (rc != ncclSuccess || p == NULL)
		return rc != ncclSuccess ? rc : ncclInvalidArgument;
	memset(p, 0, sizeof *p);
	p->name = p6.name, p->pciPath = p6.pciPath, p->ptrSupport = p6.ptrSupport, p->speed = p6.speed, p->maxComms = p6.maxComms;
	return ncclSuccess;
}

ncclResult_t np_listen(int dev, void *handle, void **listen_comm)
{
	if (dev != 0 || handle == NULL || listen_comm == NULL)
		return ncclInvalidArgument;
	struct np_listen *l = calloc(1, sizeof *l);
	if (l == NULL)
		return ncclSystemError;
	uint16_t port = 0;
	l->fd = np_listen_socket(bind_addr, &port);
	l->pending_fd = -1;
	if (l->fd < 0 || getrandom(&l->nonce, sizeof l->nonce, 0) != sizeof l->nonce) {
		NP_WARN("listen: %s", strerror(errno));
		if (l->fd >= 0)
			(void)close(l->fd); /* the error being reported is the first one */
		free(l);
		return ncclSystemError;
	}
	struct np_handle h = {.magic = NP_MAGIC, .port = port, .addr = bind_addr, .nonce = l->nonce};
	memcpy(handle, &h, sizeof h);
	*listen_comm = l;
	return ncclSuccess;
}

static struct np_comm *new_comm(int fd, bool is_send)
{
	int one = 1;
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 || np_set_nonblock(fd) != 0)
		return NULL;
	struct np_comm *c = calloc(1, sizeof *c);
	if (c == NULL)
		return NULL;
	c->fd = fd;
	c->is_send = is_send;
	return c;
}

/* The listener is listening before its handle leaves, so a connect to it
 * completes in the kernel at once: the double connects in one call, within
 * a bounded send timeout. */
ncclResult_t np_connect(int dev, void *handle, void **send_comm)
{
	if (dev != 0 || handle == NULL || send_comm == NULL)
		return ncclInvalidArgument;
	struct np_handle h;
	memcpy(&h, handle, sizeof h);
	if (h.magic != NP_MAGIC) {
		NP_WARN("connect: the handle is not this plugin's (magic %08x)", h.magic);
		return ncclInvalidArgument;
	}
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ncclSystemError;
	struct timeval tv = {5, 0};
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = h.port, .sin_addr.s_addr = h.addr};
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
	    send(fd, &h.nonce, sizeof h.nonce, MSG_NOSIGNAL) != (ssize_t)sizeof h.nonce) {
		NP_WARN("connect to port %u: %s", ntohs(h.port), strerror(errno));
		(void)close(fd); /* the error being reported is the first one */
		return ncclRemoteError;
	}
	struct np_comm *c = new_comm(fd, true);
	if (c == NULL) {
		(void)close(fd); /* the error being reported is the first one */
		return ncclSystemError;
	}
	*send_comm = c;
	return ncclSuccess;
}

/* Non-blocking: *recv_comm stays NULL until a peer connected and sent the
 * listener's nonce whole; a stranger's connection is dropped. */
ncclResult_t np_accept(void *listen_comm, void **recv_comm)
{
	struct np_listen *l = listen_comm;
	if (l == NULL || recv_comm == NULL)
		return ncclInvalidArgument;
	*recv_comm = NULL;
	if (l->pending_fd < 0) {
		l->pending_fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (l->pending_fd < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? ncclSuccess : ncclSystemError;
		l->got_n = 0;
	}
	ssize_t r = recv(l->pending_fd, l->got + l->got_n, sizeof l->got - (size_t)l->got_n, 0);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return ncclSuccess;
	if (r > 0)
		l->got_n += (int)r;
	if (r <= 0 || (l->got_n == (int)sizeof l->got && memcmp(l->got, &l->nonce, sizeof l->got) != 0)) {
		NP_WARN("accept: a connection without this listener's nonce, dropped");
		(void)close(l->pending_fd); /* a stranger's socket: nothing to report */
		l->pending_fd = -1;
		return ncclSuccess;
	}
	if (l->got_n < (int)sizeof l->got)
		return ncclSuccess;
	struct np_comm *c = new_comm(l->pending_fd, false);
	if (c == NULL)
		return ncclSystemError;
	l->pending_fd = -1;
	*recv_comm = c;
	return ncclSuccess;
}

static ncclResult_t close_comm(struct np_comm *c)
{
	if (c == NULL)
		return ncclInvalidArgument;
	int rc = close(c->fd);
	free(c);
	return rc == 0 ? ncclSuccess : ncclSystemError;
}

ncclResult_t np_close_send(void *c) { return close_comm(c); }
ncclResult_t np_close_recv(void *c) { return close_comm(c); }

ncclResult_t np_close_listen(void *lc)
{
	struct np_listen *l = lc;
	if (l == NULL)
		return ncclInvalidArgument;
	int rc = l->pending_fd >= 0 ? close(l->pending_fd) : 0;
	rc |= close(l->fd);
	free(l);
	return rc == 0 ? ncclSuccess : ncclSystemError;
}
