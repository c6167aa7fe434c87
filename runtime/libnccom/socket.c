/*
 * The bootstrap network (bootstrapNetInit) and its sockets: interface
 * choice, the socket timeout, listen / connect / accept, and the default
 * framing of upstream NCCL 2.9 (an int size, then exactly size bytes).
 * Every operation is bounded in total by NEURON_CCOM_SOCK_TIMEOUT: progress
 * does not restart it (docs/libnccom.md#deadlines-and-what-peers-send).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nccom.h"

static pthread_mutex_t net_mu = PTHREAD_MUTEX_INITIALIZER;
static bool net_ready;
static nccom_addr if_addr;
static char if_name[IF_NAMESIZE + 1];
static int sock_timeout = BOOTSTRAP_SOCK_TIMEOUT_DEFAULT;
static bool extended_mode, bidirectional_mode;

int nccom_timeout(void) { return sock_timeout; }
bool nccom_extended(void) { return extended_mode; }
bool nccom_bidirectional(void) { return bidirectional_mode; }

/* NRTABI_BOOTSTRAP_RING: unidirectional (upstream's, the default) or
 * bidirectional (docs/bootstrap-hierarchy.md#bidirectional-ring-all-gather),
 * the same on every rank. */
static NRT_STATUS read_ring(void)
{
	const char *s = getenv(ENV_BOOTSTRAP_RING);
	if (s == NULL || *s == 0 || strcmp(s, "unidirectional") == 0)
		return NRT_SUCCESS;
	if (strcmp(s, "bidirectional") == 0) {
		bidirectional_mode = true;
		return NRT_SUCCESS;
	}
	char shown[NCCOM_ESCAPED_SIZE(32)];
	nccom_warn("%s=\"%s\": use unidirectional (the default, upstream NCCL 2.9's ring) or bidirectional (both ways round, half the steps), the same on every rank",
		   ENV_BOOTSTRAP_RING, nccom_escape(s, strnlen(s, 64), shown, sizeof shown));
	return NRT_INVALID;
}

/* NRTABI_BOOTSTRAP_FRAMING: upstream (default) or extended (nrtabi's). */
static NRT_STATUS read_framing(void)
{
	const char *s = getenv("NRTABI_BOOTSTRAP_FRAMING");
	if (s == NULL || *s == 0 || strcmp(s, "upstream") == 0)
		return NRT_SUCCESS;
	if (strcmp(s, "extended") == 0) {
		extended_mode = true;
		return NRT_SUCCESS;
	}
	nccom_warn("NRTABI_BOOTSTRAP_FRAMING=\"%s\": use upstream (the default) or extended", s);
	return NRT_INVALID;
}

nccom_addr nccom_if_addr(void)
{
	nccom_addr a;
	if (pthread_mutex_lock(&net_mu) != 0)
		memset(&a, 0, sizeof a);
	a = if_addr;
	if (pthread_mutex_unlock(&net_mu) != 0)
		nccom_warn("bootstrap network: unlock failed");
	return a;
}

socklen_t nccom_addr_len(const nccom_addr *a)
{
	return a->sa.sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

void nccom_format_addr(const nccom_addr *a, char *out, size_t n)
{
	char host[INET6_ADDRSTRLEN] = "?";
	if (a->sa.sa_family == AF_INET6) {
		if (inet_ntop(AF_INET6, &a->sin6.sin6_addr, host, sizeof host) == NULL)
			strcpy(host, "?");
		snprintf(out, n, "[%s]:%u", host, ntohs(a->sin6.sin6_port));
		return;
	}
	if (a->sa.sa_family == AF_INET) {
		if (inet_ntop(AF_INET, &a->sin.sin_addr, host, sizeof host) == NULL)
			strcpy(host, "?");
		snprintf(out, n, "%s:%u", host, ntohs(a->sin.sin_port));
		return;
	}
	snprintf(out, n, "<family %d>", a->sa.sa_family);
}

/* A port is 1..65535 in decimal, nothing else. */
static bool parse_port(const char *s, uint16_t *out)
{
	if (*s == 0 || strlen(s) > 5)
		return false;
	unsigned long v = 0;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (v == 0 || v > 65535)
		return false;
	*out = (uint16_t)v;
	return true;
}

bool nccom_parse_addr(const char *s, nccom_addr *out)
{
	char host[256];
	const char *port;
	memset(out, 0, sizeof *out);
	if (s == NULL || strlen(s) >= sizeof host)
		return false;
	if (s[0] == '[') {
		const char *end = strstr(s, "]:");
		if (end == NULL || (size_t)(end - s - 1) >= sizeof host)
			return false;
		memcpy(host, s + 1, (size_t)(end - s - 1));
		host[end - s - 1] = 0;
		port = end + 2;
		uint16_t p;
		if (!parse_port(port, &p) || inet_pton(AF_INET6, host, &out->sin6.sin6_addr) != 1)
			return false;
		out->sin6.sin6_family = AF_INET6;
		out->sin6.sin6_port = htons(p);
		return true;
	}
	const char *colon = strrchr(s, ':');
	if (colon == NULL || colon == s)
		return false;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = 0;
	if (strchr(host, ':') != NULL)
		return false; /* an IPv6 address needs brackets */
	uint16_t p;
	if (!parse_port(colon + 1, &p))
		return false;
	if (inet_pton(AF_INET, host, &out->sin.sin_addr) == 1) {
		out->sin.sin_family = AF_INET;
		out->sin.sin_port = htons(p);
		return true;
	}
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
	if (getaddrinfo(host, NULL, &hints, &res) != 0 || res == NULL)
		return false;
	bool ok = false;
	if (res->ai_family == AF_INET && res->ai_addrlen <= sizeof *out) {
		memcpy(&out->sin, res->ai_addr, sizeof out->sin);
		out->sin.sin_port = htons(p);
		ok = true;
	} else if (res->ai_family == AF_INET6 && res->ai_addrlen <= sizeof *out) {
		memcpy(&out->sin6, res->ai_addr, sizeof out->sin6);
		out->sin6.sin6_port = htons(p);
		ok = true;
	}
	freeaddrinfo(res);
	return ok;
}

/* NEURON_CCOM_SOCK_TIMEOUT: whole seconds in 1..BOOTSTRAP_SOCK_TIMEOUT_MAX. */
static NRT_STATUS read_timeout(void)
{
	const char *s = getenv(ENV_SOCK_TIMEOUT);
	if (s == NULL || *s == 0)
		return NRT_SUCCESS;
	errno = 0;
	char *end = NULL;
	long v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != 0 || v < 1 || v > BOOTSTRAP_SOCK_TIMEOUT_MAX) {
		nccom_warn("%s=\"%s\": give the socket timeout as whole seconds in 1..%d", ENV_SOCK_TIMEOUT, s, BOOTSTRAP_SOCK_TIMEOUT_MAX);
		return NRT_INVALID;
	}
	sock_timeout = (int)v;
	nccom_info(NRTABI_MSG_NCCOM_SOCK_TIMEOUT, sock_timeout);
	return NRT_SUCCESS;
}

/* CCOM_SOCKET_IFNAME's list: comma-separated prefixes, '^' excludes, '=' exact. */
static bool if_match(const char *list, const char *name)
{
	bool exclude = false, exact = false;
	if (*list == '^') {
		exclude = true;
		list++;
	}
	if (*list == '=') {
		exact = true;
		list++;
	}
	bool hit = false;
	const char *p = list;
	while (*p && !hit) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n > 0)
			hit = exact ? (strlen(name) == n && strncmp(name, p, n) == 0) : strncmp(name, p, n) == 0;
		p = e ? e + 1 : p + n;
	}
	return hit != exclude;
}

static bool usable(const struct ifaddrs *ifa, int family)
{
	if (ifa->ifa_addr == NULL || !(ifa->ifa_flags & IFF_UP))
		return false;
	int f = ifa->ifa_addr->sa_family;
	if (f != AF_INET && f != AF_INET6)
		return false;
	if (family != AF_UNSPEC && f != family)
		return false;
	if (f == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&((const struct sockaddr_in6 *)(const void *)ifa->ifa_addr)->sin6_addr))
		return false; /* a link-local address needs a scope the peers cannot know */
	return true;
}

static bool on_subnet(const struct ifaddrs *ifa, const nccom_addr *root)
{
	if (ifa->ifa_netmask == NULL || ifa->ifa_addr->sa_family != root->sa.sa_family)
		return false;
	const unsigned char *a, *m, *r;
	size_t n;
	if (root->sa.sa_family == AF_INET) {
		a = (const unsigned char *)&((const struct sockaddr_in *)(const void *)ifa->ifa_addr)->sin_addr;
		m = (const unsigned char *)&((const struct sockaddr_in *)(const void *)ifa->ifa_netmask)->sin_addr;
		r = (const unsigned char *)&root->sin.sin_addr;
		n = 4;
	} else {
		a = (const unsigned char *)&((const struct sockaddr_in6 *)(const void *)ifa->ifa_addr)->sin6_addr;
		m = (const unsigned char *)&((const struct sockaddr_in6 *)(const void *)ifa->ifa_netmask)->sin6_addr;
		r = (const unsigned char *)&root->sin6.sin6_addr;
		n = 16;
	}
	for (size_t i = 0; i < n; i++)
		if ((a[i] & m[i]) != (r[i] & m[i]))
			return false;
	return true;
}

/* The first usable address whose interface list matches, IPv4 before IPv6. */
static const struct ifaddrs *pick(const struct ifaddrs *all, const char *list, int family)
{
	const int fams[2] = {AF_INET, AF_INET6};
	for (int k = 0; k < 2; k++)
		for (const struct ifaddrs *i = all; i; i = i->ifa_next)
			if (usable(i, family) && i->ifa_addr->sa_family == fams[k] && if_match(list, i->ifa_name))
				return i;
	return NULL;
}

NRT_STATUS nccom_net_init(const nccom_addr *root)
{
	if (pthread_mutex_lock(&net_mu) != 0)
		return NRT_FAILURE;
	NRT_STATUS rc = NRT_SUCCESS;
	struct ifaddrs *all = NULL;
	if (net_ready)
		goto out;
	if ((rc = read_timeout()) != NRT_SUCCESS || (rc = read_framing()) != NRT_SUCCESS || (rc = read_ring()) != NRT_SUCCESS)
		goto out;
	const char *ifname = getenv(ENV_SOCKET_IFNAME), *fam = getenv(ENV_SOCKET_FAMILY);
	int family = AF_UNSPEC;
	if (fam != NULL && *fam) {
		nccom_info(NRTABI_MSG_NCCOM_FAMILY_FROM_ENV, fam);
		if (strcmp(fam, "AF_INET") == 0)
			family = AF_INET;
		else if (strcmp(fam, "AF_INET6") == 0)
			family = AF_INET6;
		else {
			nccom_warn("%s=\"%s\": use AF_INET or AF_INET6", ENV_SOCKET_FAMILY, fam);
			rc = NRT_INVALID;
			goto out;
		}
	}
	if (getifaddrs(&all) != 0) {
		nccom_warn("getifaddrs: %s", strerror(errno));
		rc = NRT_FAILURE;
		goto out;
	}
	const struct ifaddrs *hit = NULL;
	if (ifname != NULL && *ifname) {
		nccom_info(NRTABI_MSG_NCCOM_IFNAME_FROM_ENV, ifname);
		hit = pick(all, ifname, family);
	} else {
		if (root != NULL && (root->sa.sa_family == AF_INET || root->sa.sa_family == AF_INET6))
			for (const struct ifaddrs *i = all; i && !hit; i = i->ifa_next)
				if (usable(i, family) && on_subnet(i, root))
					hit = i;
		if (!hit)
			hit = pick(all, "^docker,lo", family);
		if (!hit)
			hit = pick(all, "docker", family);
		if (!hit)
			hit = pick(all, "lo", family);
	}
	if (!hit) {
		nccom_warn(NRTABI_MSG_NCCOM_NO_INTERFACE);
		rc = NRT_FAILURE;
		goto out;
	}
	memset(&if_addr, 0, sizeof if_addr);
	memcpy(&if_addr, hit->ifa_addr, hit->ifa_addr->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
	if_addr.sin.sin_port = 0;
	snprintf(if_name, sizeof if_name, "%s", hit->ifa_name);
	char text[INET6_ADDRSTRLEN] = "?", using[120];
	const void *host = if_addr.sa.sa_family == AF_INET6 ? (const void *)&if_addr.sin6.sin6_addr : (const void *)&if_addr.sin.sin_addr;
	if (inet_ntop(if_addr.sa.sa_family, host, text, sizeof text) == NULL)
		strcpy(text, "?");
	snprintf(using, sizeof using, " %s:%s<0>", if_name, text);
	nccom_info(NRTABI_MSG_NCCOM_BOOTSTRAP_USING, using);
	net_ready = true;
out:
	if (all != NULL)
		freeifaddrs(all);
	if (pthread_mutex_unlock(&net_mu) != 0)
		return NRT_FAILURE;
	return rc;
}

void nccom_close(int *fd)
{
	if (*fd >= 0) {
		if (close(*fd) != 0 && errno != EINTR)
			nccom_warn("close(%d): %s", *fd, strerror(errno));
		*fd = -1;
	}
}

NRT_STATUS nccom_listen(nccom_addr *addr, int *fd)
{
	/* Non-blocking: accept polls first, and must not block on a
	 * connection that went away in between. */
	*fd = socket(addr->sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (*fd < 0) {
		nccom_warn("Net : Socket creation failed : %s", strerror(errno));
		return NRT_FAILURE;
	}
	/* Reuse only for a port forced from the environment (upstream). */
	if (addr->sin.sin_port != 0) {
		int one = 1;
		if (setsockopt(*fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0)
			nccom_warn("setsockopt(SO_REUSEADDR): %s", strerror(errno));
	}
	char text[80];
	nccom_format_addr(addr, text, sizeof text);
	if (bind(*fd, &addr->sa, nccom_addr_len(addr)) != 0) {
		nccom_warn("bootstrap cannot listen on %s: %s", text, strerror(errno));
		nccom_close(fd);
		return NRT_FAILURE;
	}
	socklen_t len = sizeof *addr;
	if (getsockname(*fd, &addr->sa, &len) != 0 || listen(*fd, BOOTSTRAP_LISTEN_BACKLOG) != 0) {
		nccom_warn("bootstrap listen on %s: %s", text, strerror(errno));
		nccom_close(fd);
		return NRT_FAILURE;
	}
	return NRT_SUCCESS;
}

int64_t nccom_now_ms(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

nccom_deadline nccom_op_deadline(void)
{
	return nccom_now_ms() + (int64_t)sock_timeout * 1000;
}

int nccom_left_ms(nccom_deadline d)
{
	int64_t left = d - nccom_now_ms();
	if (left <= 0)
		return 0;
	return left > INT32_MAX ? INT32_MAX : (int)left;
}

void nccom_peer_of(int fd, char *out, size_t n)
{
	nccom_addr a;
	socklen_t len = sizeof a;
	memset(&a, 0, sizeof a);
	if (fd < 0 || getpeername(fd, &a.sa, &len) != 0) {
		snprintf(out, n, "?");
		return;
	}
	nccom_format_addr(&a, out, n);
}

/* The ring links a thread's waits also watch (nccom_watch_set). */
static __thread const struct nccom_watch *tl_watch;

void nccom_watch_set(const struct nccom_watch *w) { tl_watch = w; }

/* How this thread's last transfer, connect or accept ended (peer_fail.c
 * tells a dead peer from a wait of this rank's own that ran out). */
static __thread int tl_end;

int nccom_io_end(void) { return tl_end; }
void nccom_io_end_reset(void) { tl_end = NCCOM_END_NONE; }

/* Whether fd's next bytes open an abort (peeked, nothing consumed). */
static bool abort_pending(int fd)
{
	unsigned char hdr[NCCOM_FRAME_HEADER_MAX];
	size_t hl = extended_mode ? sizeof(struct bootstrap_msg_header) : sizeof(struct bootstrap_frame_size);
	if (recv(fd, hdr, hl, MSG_PEEK | MSG_DONTWAIT) != (ssize_t)hl)
		return false;
	if (nccom_extended()) {
		struct bootstrap_msg_header h;
		memcpy(&h, hdr, sizeof h);
		return h.type == BOOTSTRAP_MSG_ABORT;
	}
	struct bootstrap_frame_size f;
	memcpy(&f, hdr, sizeof f);
	return f.size == BOOTSTRAP_FRAME_ABORT;
}

/* Whether a ring link's peer has hung up or reset it (nothing consumed). */
static bool link_ended(int fd)
{
	char c;
	ssize_t k = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	return k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* Wait for events on fd (-1: none, a sleep) until d; 1 ready, 0 timed
 * out, -1 error (errno), NCCOM_WAIT_ABORTED an abort frame on a watched
 * ring link (logged and passed on by the watch). A watched link with
 * anything else to read (a peer already in the next gather, or gone) is
 * left alone for the rest of the wait. The remaining time is taken afresh
 * after an interruption. */
static int wait_fd(int fd, short events, nccom_deadline d)
{
	const struct nccom_watch *w = tl_watch;
	bool skip[NCCOM_MAX_LINKS] = {false};
	for (;;) {
		struct pollfd p[1 + NCCOM_MAX_LINKS];
		int at[1 + NCCOM_MAX_LINKS], np = 1;
		p[0] = (struct pollfd){.fd = fd, .events = events};
		for (int i = 0; w != NULL && i < NCCOM_MAX_LINKS; i++)
			if (w->fds[i] >= 0 && !skip[i]) {
				at[np] = i;
				p[np++] = (struct pollfd){.fd = w->fds[i], .events = POLLIN};
			}
		int rc = poll(p, (nfds_t)np, nccom_left_ms(d));
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			return rc;
		if (fd >= 0 && p[0].revents != 0)
			return 1;
		for (int k = 1; k < np; k++) {
			if (p[k].revents == 0)
				continue;
			int lf = w->fds[at[k]];
			if (abort_pending(lf) && w->aborted(w->arg, at[k]))
				return NCCOM_WAIT_ABORTED;
			skip[at[k]] = true;
			if (w->peer >= 0 && w->ranks[at[k]] == w->peer && link_ended(lf)) {
				/* What it sent before it went may still be on its way. */
				struct pollfd q = {.fd = fd, .events = events};
				int g = fd >= 0 ? poll(&q, 1, NCCOM_ABORT_WAIT_MS) : 0;
				if (g > 0)
					return 1;
				if (!abort_pending(lf) || !w->aborted(w->arg, at[k]))
					return NCCOM_WAIT_PEER_GONE;
				return NCCOM_WAIT_ABORTED;
			}
		}
	}
}

NRT_STATUS nccom_connect(const nccom_addr *addr, int *fd, nccom_deadline d)
{
	char text[80];
	nccom_format_addr(addr, text, sizeof text);
	if (addr->sa.sa_family != AF_INET && addr->sa.sa_family != AF_INET6) {
		nccom_warn("Error : connecting to address with family %d is neither AF_INET(%d) nor AF_INET6(%d)", addr->sa.sa_family, AF_INET, AF_INET6);
		return NRT_INVALID;
	}
	for (int attempt = 1;; attempt++) {
		*fd = socket(addr->sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (*fd < 0) {
			nccom_warn("Net : Socket creation failed : %s", strerror(errno));
			return NRT_FAILURE;
		}
		int one = 1;
		if (setsockopt(*fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
			nccom_warn("setsockopt(TCP_NODELAY): %s", strerror(errno));
		int err = 0;
		if (connect(*fd, &addr->sa, nccom_addr_len(addr)) != 0) {
			err = errno;
			if (err == EINPROGRESS) {
				int w = wait_fd(*fd, POLLOUT, d);
				socklen_t len = sizeof err;
				if (w == NCCOM_WAIT_ABORTED || w == NCCOM_WAIT_PEER_GONE) {
					tl_end = w == NCCOM_WAIT_ABORTED ? NCCOM_END_ABORTED : NCCOM_END_RING_GONE;
					nccom_close(fd);
					return NRT_FAILURE;
				}
				if (w <= 0)
					err = w == 0 ? ETIMEDOUT : errno;
				else if (getsockopt(*fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
					err = errno;
			}
		}
		if (err == 0)
			return NRT_SUCCESS; /* non-blocking: every operation polls first */
		nccom_close(fd);
		if (err == ECONNREFUSED && nccom_left_ms(d) > 1) {
			if (attempt % 1000 == 0)
				nccom_info("Call to connect returned %s, retrying", strerror(err));
			/* A millisecond before the retry, watching for an abort. */
			int w = wait_fd(-1, 0, nccom_now_ms() + 1);
			if (w == NCCOM_WAIT_ABORTED || w == NCCOM_WAIT_PEER_GONE) {
				tl_end = w == NCCOM_WAIT_ABORTED ? NCCOM_END_ABORTED : NCCOM_END_RING_GONE;
				return NRT_FAILURE;
			}
			continue;
		}
		/* Refused is retried to the deadline (the peer may not listen
		 * yet); a reset is a listener that went with this connection in
		 * its queue. */
		tl_end = err == ECONNREFUSED || err == ETIMEDOUT ? NCCOM_END_TIMEOUT : err == ECONNRESET ? NCCOM_END_CLOSED : NCCOM_END_OTHER;
		if (err == ECONNREFUSED || err == ETIMEDOUT)
			nccom_warn(NRTABI_MSG_NCCOM_CONNECT_FAILED " (within %d s, %s)", text,
				   err == ETIMEDOUT ? "Connection timed out" : strerror(err), sock_timeout, ENV_SOCK_TIMEOUT);
		else
			nccom_warn(NRTABI_MSG_NCCOM_CONNECT_FAILED, text, strerror(err));
		return NRT_TIMEOUT;
	}
}

NRT_STATUS nccom_accept(int listen_fd, int *fd, nccom_addr *from, const char *what, nccom_deadline d)
{
	for (;;) {
		/* Past the deadline even a pending connection is not taken:
		 * strangers queued up must not carry the search on. */
		int w = nccom_left_ms(d) > 0 ? wait_fd(listen_fd, POLLIN, d) : 0;
		if (w == NCCOM_WAIT_ABORTED || w == NCCOM_WAIT_PEER_GONE) {
			tl_end = w == NCCOM_WAIT_ABORTED ? NCCOM_END_ABORTED : NCCOM_END_RING_GONE;
			return NRT_FAILURE;
		}
		if (w == 0) {
			tl_end = NCCOM_END_TIMEOUT;
			nccom_warn(NRTABI_MSG_NCCOM_SOCKET_TIMEOUT, "accepting", what, sock_timeout);
			return NRT_TIMEOUT;
		}
		if (w < 0) {
			nccom_warn("accepting %s: %s", what, strerror(errno));
			return NRT_FAILURE;
		}
		nccom_addr a;
		socklen_t len = sizeof a;
		memset(&a, 0, sizeof a);
		*fd = accept4(listen_fd, &a.sa, &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (*fd >= 0) {
			/* The accepted side writes too (both ways round a ring,
			 * docs/bootstrap-hierarchy.md#bidirectional-ring-all-gather):
			 * without TCP_NODELAY its small frames wait out the
			 * peer's delayed ACK, about 40 ms a step. */
			int one = 1;
			if (setsockopt(*fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
				nccom_warn("setsockopt(TCP_NODELAY): %s", strerror(errno));
			if (from != NULL)
				*from = a;
			return NRT_SUCCESS;
		}
		/* The listen socket is non-blocking: a connection that went away
		 * between poll and accept is waited past, within the deadline. */
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
			continue;
		nccom_warn("accepting %s: %s", what, strerror(errno));
		return NRT_FAILURE;
	}
}

/* " (peer ADDR)" when the name a caller gave its peer lacks the address
 * (and the socket still knew it). */
static void peer_suffix(const char *addr, const char *peer, char *out, size_t n)
{
	if (strstr(peer, addr) != NULL || strcmp(addr, "?") == 0)
		out[0] = 0;
	else
		snprintf(out, n, " (peer %s)", addr);
}

/* Move exactly n bytes by d. */
NRT_STATUS nccom_xfer(int fd, void *buf, size_t n, bool send_dir, const char *peer, nccom_deadline d)
{
	char *p = buf, also[100], addr[80] = "?";
	size_t total = n;
	/* Taken while the socket still knows it: a reset peer leaves none. */
	if (n > 0)
		nccom_peer_of(fd, addr, sizeof addr);
	while (n > 0) {
		int w = nccom_left_ms(d) > 0 ? wait_fd(fd, send_dir ? POLLOUT : POLLIN, d) : 0;
		if (w == NCCOM_WAIT_ABORTED || w == NCCOM_WAIT_PEER_GONE) {
			tl_end = w == NCCOM_WAIT_ABORTED ? NCCOM_END_ABORTED : NCCOM_END_RING_GONE;
			return NRT_FAILURE;
		}
		if (w == 0) {
			tl_end = NCCOM_END_TIMEOUT;
			peer_suffix(addr, peer, also, sizeof also);
			nccom_warn(NCCOM_MSG_DEADLINE "%s: %zu of %zu bytes", send_dir ? "sending to" : "receiving from", peer,
				   sock_timeout, also, total - n, total);
			return NRT_TIMEOUT;
		}
		if (w < 0) {
			int e = errno;
			peer_suffix(addr, peer, also, sizeof also);
			nccom_warn("poll on %s%s: %s", peer, also, strerror(e));
			return NRT_FAILURE;
		}
		ssize_t k = send_dir ? send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT) : recv(fd, p, n, MSG_DONTWAIT);
		if (k == 0 && !send_dir) {
			tl_end = NCCOM_END_CLOSED;
			peer_suffix(addr, peer, also, sizeof also);
			nccom_warn("%s (%s%s)", NRTABI_MSG_NCCOM_CONNECTION_CLOSED, peer, also);
			return NRT_FAILURE;
		}
		if (k < 0) {
			int e = errno;
			if (e == EINTR || e == EAGAIN || e == EWOULDBLOCK)
				continue;
			tl_end = e == ECONNRESET || e == EPIPE ? NCCOM_END_CLOSED : NCCOM_END_OTHER;
			peer_suffix(addr, peer, also, sizeof also);
			if (send_dir)
				nccom_warn("Call to send to %s%s failed : %s", peer, also, strerror(e));
			else
				nccom_warn("Call to recv from %s%s failed : %s", peer, also, strerror(e));
			return NRT_FAILURE;
		}
		p += k;
		n -= (size_t)k;
	}
	return NRT_SUCCESS;
}

NRT_STATUS nccom_send_frame(int fd, const void *data, int size, const char *peer)
{
	struct bootstrap_frame_size h = {.size = size};
	nccom_deadline d = nccom_op_deadline();
	NRT_STATUS rc = nccom_xfer(fd, &h, sizeof h, true, peer, d);
	if (rc == NRT_SUCCESS && size > 0)
		rc = nccom_xfer(fd, (void *)(uintptr_t)data, (size_t)size, true, peer, d);
	return rc;
}

NRT_STATUS nccom_recv_frame(int fd, void *data, int size, int *got, const char *peer)
{
	return nccom_recv_frame_by(fd, data, size, got, peer, nccom_op_deadline());
}

NRT_STATUS nccom_recv_frame_by(int fd, void *data, int size, int *got, const char *peer, nccom_deadline d)
{
	struct bootstrap_frame_size h;
	NRT_STATUS rc = nccom_xfer(fd, &h, sizeof h, false, peer, d);
	if (rc != NRT_SUCCESS)
		return rc;
	if (h.size == BOOTSTRAP_FRAME_ABORT) {
		/* A peer's abort: the caller reads the rest (nccom_frame_read_abort). */
		tl_end = NCCOM_END_ABORT_FRAME;
		return NRT_FAILURE;
	}
	if (h.size < 0 || h.size > size) {
		nccom_warn(NRTABI_MSG_NCCOM_MSG_TRUNCATED " (from %s)", h.size, size, peer);
		return NRT_FAILURE;
	}
	if (got != NULL)
		*got = h.size;
	return h.size > 0 ? nccom_xfer(fd, data, (size_t)h.size, false, peer, d) : NRT_SUCCESS;
}
