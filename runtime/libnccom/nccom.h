/*
 * The reference libnccom's internal interface: the pieces of the
 * ncclCommInitRank path of docs/sources.md#s001 (version, unique id, root, flat bootstrap, comm) that
 * the neuron* exports are built from. Layouts and constants come from the
 * generated nrtabi.h; nothing here restates a size or an offset.
 */
#ifndef NCCOM_REF_H
#define NCCOM_REF_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "nrtabi.h"

/* The git hash this build reports in neuronGetVersionInfo and welds into
 * nccl_nrt_git_hash; a test builds a skewed variant by overriding it. */
#ifndef NCCOM_REF_GIT_HASH
#define NCCOM_REF_GIT_HASH "1a31ba186"
#endif

/* What the init path returns for a bad pointer, rank or root comm id: the
 * core's ncclInvalidArgument, which the seed's wrappers pass through as
 * their NRT_STATUS ("return ncclCommInitRank(...)", seed 001 §1-§2), so
 * libnrt reads 4, which is NRT_RESOURCE in its own enum (contradiction row
 * init-status-invalid-argument). The other exports, whose bodies no seed
 * traces, refuse with NRT_INVALID. */
#define NCCOM_INVALID_ARGUMENT ((NRT_STATUS)ncclInvalidArgument)

/* ncclGetVersion (upstream's public call): the fork constant 2999, not the
 * release (seed 001 §4). */
ncclResult_t ncclGetVersion(int *version);

/* ---- log.c ---------------------------------------------------------------- */
void nccom_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void nccom_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Peer-supplied bytes for a log line: printable ASCII kept, everything else
 * as \xHH, NUL-terminated within cap, cut with "..." when
 * it does not fit. Returns out. Every byte a peer sent that is printed goes
 * through it. */
const char *nccom_escape(const void *data, size_t len, char *out, size_t cap);
/* What nccom_escape needs for len bytes shown whole. */
#define NCCOM_ESCAPED_SIZE(len) (4 * (len) + 1)

/* ---- socket.c: addresses, the bootstrap network, framed I/O ---------------- */
/* A bootstrap address: the 28-byte socketAddress union (docs/sources.md#s001-5). */
typedef union nccom_addr {
	struct sockaddr sa;
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
} nccom_addr;
_Static_assert(sizeof(nccom_addr) == NCCL_SOCKET_ADDRESS_SIZE, "socketAddress is the 28-byte sockaddr_in6");

/* bootstrapNetInit: picks the interface once per process (CCOM_SOCKET_IFNAME,
 * CCOM_SOCKET_FAMILY; the root's subnet when root is given) and reads
 * NEURON_CCOM_SOCK_TIMEOUT. 0 or a status. */
NRT_STATUS nccom_net_init(const nccom_addr *root);
/* The chosen interface address (port 0). */
nccom_addr nccom_if_addr(void);
/* The socket timeout in seconds. */
int nccom_timeout(void);
/* GetSocketAddrFromString: <ipv4>:<port> | [<ipv6>]:<port> | <hostname>:<port>. */
bool nccom_parse_addr(const char *s, nccom_addr *out);
/* "a.b.c.d:port" / "[v6]:port". */
void nccom_format_addr(const nccom_addr *a, char *out, size_t n);
socklen_t nccom_addr_len(const nccom_addr *a);

/* Deadlines: every blocking operation has a total one, a CLOCK_MONOTONIC
 * instant in milliseconds taken when the logical operation starts (a whole
 * message, an accept until the right peer, a connect with its retries), so
 * a peer that drips bytes or strangers that keep connecting cannot restart
 * it (NEURON_CCOM_SOCK_TIMEOUT, docs/sources.md#s001-5;
 * docs/libnccom.md#deadlines-and-what-peers-send). */
typedef int64_t nccom_deadline;
/* Now on that clock. */
int64_t nccom_now_ms(void);
/* Now + NEURON_CCOM_SOCK_TIMEOUT. */
nccom_deadline nccom_op_deadline(void);
/* Milliseconds left until d, 0 once it has passed. */
int nccom_left_ms(nccom_deadline d);
/* The connected peer's "ip:port" ("?" when the socket cannot say). */
void nccom_peer_of(int fd, char *out, size_t n);
/* The log line of an operation that hit its deadline: "Bootstrap : <op>
 * <peer>: not done within <t> s (NEURON_CCOM_SOCK_TIMEOUT, a total
 * deadline)", then what the caller adds. */
#define NCCOM_MSG_DEADLINE "Bootstrap : %s %s: not done within %d s (" ENV_SOCK_TIMEOUT ", a total deadline)"

/* createListenSocket: listen on *addr (port 0: any), fill in the port. */
NRT_STATUS nccom_listen(nccom_addr *addr, int *fd);
/* connectAddress by d, retrying while refused. */
NRT_STATUS nccom_connect(const nccom_addr *addr, int *fd, nccom_deadline d);
/* One connection by d; *from (may be NULL) is its address. */
NRT_STATUS nccom_accept(int listen_fd, int *fd, nccom_addr *from, const char *what, nccom_deadline d);
/* bootstrapNetSend / bootstrapNetRecv: an int size, then exactly size bytes,
 * the whole frame within the timeout. A frame larger than size is "Message
 * truncated"; *got (may be NULL) is the number of bytes the frame carried. */
NRT_STATUS nccom_send_frame(int fd, const void *data, int size, const char *peer);
NRT_STATUS nccom_recv_frame(int fd, void *data, int size, int *got, const char *peer);
NRT_STATUS nccom_recv_frame_by(int fd, void *data, int size, int *got, const char *peer, nccom_deadline d);
void nccom_close(int *fd);
/* Exactly n bytes each way by d; the error names peer and its address. */
NRT_STATUS nccom_xfer(int fd, void *buf, size_t n, bool send_dir, const char *peer, nccom_deadline d);
/* Whether the extended framing (NRTABI_BOOTSTRAP_FRAMING=extended) is on. */
bool nccom_extended(void);
/* How this thread's last failed transfer, connect or accept ended: the
 * peer closed or reset it, this rank's own wait ran out, an abort was heard
 * on a watched link, or an abort frame opened what was read. */
enum { NCCOM_END_NONE, NCCOM_END_CLOSED, NCCOM_END_TIMEOUT, NCCOM_END_ABORTED, NCCOM_END_ABORT_FRAME, NCCOM_END_RING_GONE, NCCOM_END_OTHER };
int nccom_io_end(void);
void nccom_io_end_reset(void);

/* ---- extended.c: nrtabi's extended framing ({u32 type, u32 length}) -------- */
NRT_STATUS nccom_send_msg(int fd, uint32_t type, const void *data, uint32_t len, const char *peer);
/* One message of at most max bytes; an ABORT is logged with its sender and
 * returned as NRT_FAILURE. */
NRT_STATUS nccom_recv_msg(int fd, uint32_t *type, void *buf, uint32_t max, uint32_t *got, const char *peer);
/* The same by d, a deadline the caller's operation set. */
NRT_STATUS nccom_recv_msg_by(int fd, uint32_t *type, void *buf, uint32_t max, uint32_t *got, const char *peer, nccom_deadline d);
/* The reason of the last ABORT nccom_recv_msg read on this thread, escaped
 * ("" when the last message read was not an ABORT): a rank that hears the
 * root end the world passes the root's reason on, so every rank names the
 * dead rank (docs/bootstrap-hierarchy.md#abort-frames). */
const char *nccom_last_abort(void);
/* A message of type want and exactly size bytes, passing over ROOT_WAIT
 * heartbeats until total, a deadline they never move. */
NRT_STATUS nccom_recv_want_by(int fd, uint32_t want, void *buf, uint32_t size, const char *peer, nccom_deadline total);
/* nccom_recv_want_by three timeouts from now. */
NRT_STATUS nccom_recv_want(int fd, uint32_t want, void *buf, uint32_t size, const char *peer);
NRT_STATUS nccom_send_hello(int fd, int rank, int nranks, uint32_t channel, const char *peer);
/* The HELLO opening a connection, by d. */
NRT_STATUS nccom_recv_hello(int fd, struct bootstrap_peer_hello *h, const char *peer, nccom_deadline d);
/* send / receive one bootstrap message in the process's framing. */
NRT_STATUS nccom_send_data(int fd, uint32_t type, const void *data, int size, const char *peer);
NRT_STATUS nccom_recv_data(int fd, uint32_t type, void *data, int size, const char *peer);
/* ---- frame.c: what a ring link carries, by framing ----------------------- */
/* The largest frame header (the extended framing's 8 bytes). */
#define NCCOM_FRAME_HEADER_MAX 8
/* How long an abort frame is tried on a link, and read from one, in ms
 * (docs/bootstrap-hierarchy.md#abort-frames): a rank leaving a world does
 * not wait on a peer that does not read. */
#define NCCOM_ABORT_WAIT_MS 100
/* How long a root that saw a rank fail reads the others before it names
 * the cause (root.c's explain), and a rank whose point-to-point peer hung
 * up reads its ring links for the abort that may explain it (peer_fail.c;
 * runtime/transport/tcp's hangUpGrace). */
#define NCCOM_HANG_UP_GRACE_MS 250
/* The ring data a peer may have sent ahead of its abort that is passed over to find it. */
#define NCCOM_ABORT_SKIP_MAX ((size_t)64 << 20)
/* An abort: the default framing's bootstrap_abort_info (after a size of
 * BOOTSTRAP_FRAME_ABORT) and its text; the extended framing's ABORT
 * message carries the text alone. */
struct nccom_abort {
	struct bootstrap_abort_info info;
	uint32_t len;
	char text[BOOTSTRAP_ABORT_TEXT_MAX + 1];
};
/* BOOTSTRAP_PHASE_* as log lines name it. */
const char *nccom_phase_name(uint32_t phase);
/* Whether the rings run both ways (NRTABI_BOOTSTRAP_RING=bidirectional). */
bool nccom_bidirectional(void);
size_t nccom_frame_header_size(void);
/* The header of len bytes of ring data into out; its size. */
size_t nccom_frame_header(size_t len, unsigned char *out);
/* A received header: 0 ring data of want bytes, 1 an abort (read into ab),
 * -1 anything else (what, in ab->text). */
int nccom_frame_check(int fd, const unsigned char *hdr, size_t want, struct nccom_abort *ab);
/* Reads what a peer left on fd for an abort: 1 found (ab), 0 it closed
 * (*err 0) or reset (*err), -1 something else or too much (what, in ab->text). */
int nccom_frame_find_abort(int fd, struct nccom_abort *ab, int *err);
/* Sends ab within NCCOM_ABORT_WAIT_MS; false when it could not. */
bool nccom_frame_send_abort(int fd, const struct nccom_abort *ab);
/* The rest of a default-framing abort whose size prefix was just read:
 * 1 whole, 0 cut short or malformed (what, in ab->text). */
int nccom_frame_read_abort_body(int fd, struct nccom_abort *ab);

/* ---- step.c: one step of a gather over this rank's ring links --------------- */
#define NCCOM_MAX_LINKS 4
enum { NCCOM_LINK_NEXT, NCCOM_LINK_PREV, NCCOM_LINK_INTER_NEXT, NCCOM_LINK_INTER_PREV };
/* One TCP connection to a ring neighbour (both directions are used). */
struct nccom_link {
	int fd; /* -1: none */
	int rank; /* the neighbour's */
	char name[80]; /* "intra ring successor rank 5" */
	char addr[80]; /* its address, as the socket said when wired */
	nccl_socket_address_t sa; /* the same as a socketAddress */
	bool dead; /* hung up, reset, torn or aborted: nothing more is sent on it */
};
/* "NAME (peer ADDR)". */
void nccom_link_where(const struct nccom_link *l, char *out, size_t n);
/* l is wired on fd to rank: its name, and the address its socket reports. */
void nccom_link_wired(struct nccom_link *l, int fd, int rank, const char *name);
/* What one step moves on one link. */
struct nccom_move {
	const void *out;
	size_t out_len;
	bool send;
	void *in;
	size_t in_len;
	bool recv;
	/* This rank sends on the link after this step, so its peer must not
	 * hang up: a hang-up fails the step at once. A peer that needs nothing
	 * more from this rank may finish and close; what it still owed is
	 * already queued, and reading it finds an early end. */
	bool watch;
};
/* A gather in progress: this rank's links, the root link (extended framing,
 * until COMPLETE; -1 none), what it gathers (NCCOM_PHASE_*), the ring phase
 * (BOOTSTRAP_PHASE_*) and step under way, the peers' listen addresses when
 * known, and the failure, which abort.c passes on. */
struct nccom_gather {
	struct nccom_link *links;
	int nlinks, root_fd, me;
	const char *root_name, *phase;
	uint32_t ring_phase;
	int step;
	const nccl_socket_address_t *listen;
	bool failed, forward; /* forward: ab came from another rank, passed on unchanged */
	struct nccom_abort ab;
};
/* One step: mv[i] on links[i], every link polled; a link not moving data
 * (or done) is still watched for a hang-up when mv[i].watch. A failure is
 * logged and kept in g->ab. */
NRT_STATUS nccom_step(struct nccom_gather *g, const struct nccom_move *mv);
/* This rank's own failure with the party at l (NULL: none) to blame:
 * logged, kept in g->ab. */
NRT_STATUS nccom_gather_fault(struct nccom_gather *g, struct nccom_link *l, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* An abort from l ends the gather: logged, kept in g->ab to be passed on unchanged. */
NRT_STATUS nccom_gather_aborted(struct nccom_gather *g, struct nccom_link *l, const struct nccom_abort *ab);

/* While a thread waits on a bootstrap's point-to-point sockets, that
 * bootstrap's ring links are watched for an abort frame: a rank that had
 * finished its gather when the world failed hears it there (socket.c's
 * waits end at once; aborted reads, logs and passes it on, bootstrap.c). */
struct nccom_watch {
	int fds[NCCOM_MAX_LINKS];
	/* The rank at the other end of each, and the rank this wait is for (-1:
	 * none): that rank's ring link ending with no abort while this rank still
	 * waits for its message is its death, not its end (it cannot be done
	 * with a world that still owes this rank a message). */
	int ranks[NCCOM_MAX_LINKS], peer;
	bool (*aborted)(void *arg, int i); /* the abort on fds[i] read: true fails the wait */
	void *arg;
};
#define NCCOM_WAIT_ABORTED (-2)
#define NCCOM_WAIT_PEER_GONE (-3)
/* This thread's watch (socket.c), NULL for none. */
void nccom_watch_set(const struct nccom_watch *w);

/* ---- peer_fail.c: a point-to-point failure after the gather ---------------- */
/* rc, the failure of a send to or receive from peer on fd (-1: none),
 * told to the world (docs/bootstrap-hierarchy.md#abort-frames): a peer that
 * closed or reset the connection before this rank's own deadline is named
 * dead; an abort read from it is passed on; a wait of this rank's own that
 * ran out names no one dead, but says so. Either way the abort goes on this
 * rank's ring links and its point-to-point connections, once. */
struct nccom_bootstrap;
void nccom_peer_fail(struct nccom_bootstrap *b, int peer, int fd);
/* ab on every point-to-point connection of b but skip, each then shut
 * down: a rank that leaves a failed world says why to the peers it talks
 * to directly, so none of them takes its hang-up for its death. */
void nccom_tell_peers(struct nccom_bootstrap *b, const struct nccom_abort *ab, int skip);

/* ---- abort.c: leaving a world ---------------------------------------------- */
/* After a failed gather: g->ab as an abort frame on every live link and the
 * root link, then each is shut down, so every rank hears it within a hop each. */
void nccom_gather_abort(struct nccom_gather *g);
/* What nccom_links_poll's ready says of a link with input: watch it on,
 * stop watching it, or end the poll with it. */
enum { NCCOM_LINK_KEEP, NCCOM_LINK_DROP, NCCOM_LINK_STOP };
/* Polls the links of links[0..n) (n at most NCCOM_MAX_LINKS) that have a
 * socket for input until d, calling ready(arg, fd) for each link that has
 * some; the time left is taken afresh after an interruption. The index of
 * the link whose ready said NCCOM_LINK_STOP, or -1: the deadline passed,
 * no link was left to watch, or poll failed. */
int nccom_links_poll(const struct nccom_link *links, int n, nccom_deadline d, int (*ready)(void *arg, int fd), void *arg);

/* ---- version.c ------------------------------------------------------------ */
/* getNcclNrtGitHash: libnccom's 8 bytes, then libnrt's (nrt_get_version). */
NRT_STATUS nccom_git_hash(nccl_nrt_git_hash_t *out);

struct nccom_roots;

/* ---- root.c --------------------------------------------------------------- */
/* bootstrapCreateRoot: listens at *addr (port 0: any; filled in) and serves
 * one world of nranks in a thread: detached, or joinable through *join. */
NRT_STATUS nccom_create_root(nccom_addr *addr, int nranks, bool global, bool from_env, pthread_t *join);
/* Root index of roots (R = roots->n > 1) at roots->addr[index]: its range and the roots' ring. */
NRT_STATUS nccom_create_root_of(const struct nccom_roots *roots, int index, int nranks, bool global, pthread_t *join);
/* setFilesLimit: RLIMIT_NOFILE to its hard limit (a global world). */
void nccom_set_files_limit(void);

/* ---- hier.c: the hierarchical bootstrap's shape (docs/libnccom.md#the-hierarchical-bootstrap) */
/* L, the ranks per instance, from NRTABI_BOOTSTRAP_PER_INSTANCE: 0 when
 * unset (flat, said once), NRT_INVALID naming the variable when it is not an
 * integer in 1..BOOTSTRAP_PER_INSTANCE_MAX. */
NRT_STATUS nccom_per_instance(int *L);
/* The dispatch of both roles: the root-side condition of docs/sources.md#s001-3
 * (isGlobalInit && nranks > vncPerInstance); the init-side "nranks != 0" is
 * the garbled reading (contradiction row bootstrap-dispatch). */
bool nccom_hierarchical(bool global, int nranks, int L);
/* The grouping: instance h = r / L holds min(L, n - h*L) ranks, its leader is h*L. */
static inline int nccom_hier_ninstances(int n, int L) { return (n + L - 1) / L; }
static inline int nccom_hier_local_n(int n, int L, int h) { return n - h * L < L ? n - h * L : L; }
/* Test-only fault hooks (a -DNCCOM_REF_FAULTS build, NRTABI_NCCOM_FAULT=name):
 * always false in a normal build. */
bool nccom_fault(const char *name);
/* The root's part: whether rank r's record fits the shape (a non-empty
 * reason refuses the world), and rank r's INFO_FROM_ROOT. */
void nccom_hier_check(const struct extInfoHier *rec, int L, const char *who, char *reason, size_t len);
/* beyond: the listen address of the next range's first rank, for a
 * successor outside [lo, hi) (multi-root; one root: rank 0's). */
struct bootstrap_root_reply_hier nccom_hier_reply(const struct extInfoHier *rec, int r, int n, int L, int lo, int hi, const nccl_socket_address_t *beyond,
						  uint64_t cluster, time_t epoch);

/* ---- roots.c: multi-root scalable init, the rule and the split -------------- */
/* NRTABI_BOOTSTRAP_ROOTS: n roots in root order (n = 0: unset, one root as
 * the root comm id says). */
struct nccom_roots {
	int n;
	nccom_addr *addr;
};
NRT_STATUS nccom_roots_get(struct nccom_roots *out);
void nccom_roots_free(struct nccom_roots *r);
/* R in 1..units of the world, and the default framing when R > 1; refused by name. */
NRT_STATUS nccom_roots_check(int R, int n, int L, bool global);
/* The ranks [lo, hi) root i of R serves. */
void nccom_root_range(int i, int R, int n, int L, bool global, int *lo, int *hi);
/* The root of rank. */
int nccom_root_of(int rank, int R, int n, int L, bool global);

/* ---- root_ring.c: the roots' ring ------------------------------------------ */
struct nccom_root_ring {
	int nroots, index, lo, hi, n, L;
	bool global;
	const nccom_addr *roots;
	int next_fd, prev_fd;
	uint64_t cluster;
	time_t epoch;
};
/* Dial the next root, send this root's range (root 0: mint and send the cluster id). */
NRT_STATUS nccom_root_ring_open(struct nccom_root_ring *rr);
/* A 32-byte first frame on *fd from peer: the previous root's range,
 * checked against the rule; the fd is taken. */
NRT_STATUS nccom_root_ring_take_range(struct nccom_root_ring *rr, int *fd, const void *rec, const char *peer);
/* This root's ranks are in: first (its first rank's listen address) back,
 * the next range's first into *next_first, the cluster id on. */
NRT_STATUS nccom_root_ring_finish(struct nccom_root_ring *rr, const nccl_socket_address_t *first, nccl_socket_address_t *next_first);
void nccom_root_ring_close(struct nccom_root_ring *rr);
/* Past the reply, extended framing (docs/bootstrap-hierarchy.md#multi-root-the-roots-ring). */
struct nccom_root_rec {
	bool done;
	int origin, rank; /* rank: -1 none */
	uint32_t kind;	  /* an abort's BOOTSTRAP_ROOT_ABORT_* */
	char text[NCCOM_ESCAPED_SIZE(BOOTSTRAP_ABORT_TEXT_MAX)];
};
/* One frame's payload from the previous root (from names it), checked:
 * false with why when it is forged or out of order. */
bool nccom_root_rec_parse(const struct nccom_root_ring *rr, const void *buf, int got, const char *from, struct nccom_root_rec *out, char *why, size_t len);
/* Pass a record from origin on to the next root, unless the next is origin. */
void nccom_root_ring_relay(const struct nccom_root_ring *rr, const void *rec, int size, int origin);
/* All this root's ranks sent RING_DONE: its done record to the next root. */
NRT_STATUS nccom_root_ring_done(const struct nccom_root_ring *rr);
/* A failure this root saw (rank -1: none of its ranks) to the next root. */
void nccom_root_ring_publish(const struct nccom_root_ring *rr, int rank, uint32_t kind, const char *text);

/* ---- the bootstrap's state (bootstrap.c makes and frees it) ---------------- */
/* The unexpected-connection queue of upstream bootstrapRecv. */
struct nccom_unexpected {
	int peer, tag, fd;
	struct nccom_unexpected *next;
};

/* Everything a bootstrap needs besides the seed's 64-byte extState: the
 * extState is the first member, so comm->bootstrap points at its layout. */
struct nccom_bootstrap {
	struct extState st;
	pthread_mutex_t send_mu, recv_mu, ring_mu;
	struct nccom_unexpected *queue;
	int root_fd; /* extended framing: the root link, open until COMPLETE */
	/* Hierarchical (per_instance > 0): extRingSendFd / extRingRecvFd are the
	 * intra ring (-1 in an instance of one), inter_* the leaders' ring. */
	int per_instance, instance, ninstances, local, local_n;
	int inter_send_fd, inter_recv_fd;
	/* Set for one nccom_bootstrap_allgather_records under ring_mu. */
	bool relay_check;
	size_t relay_rank_off;
	/* The ring links by NCCOM_LINK_*: names and addresses set when wired,
	 * fds taken from the slots above for each gather. */
	struct nccom_link ring[NCCOM_MAX_LINKS];
	char root_name[96];
	bool addresses_known; /* peerCommAddresses gathered */
	int range_lo, range_n; /* the ranks of this rank's root (the stagger counts within them) */
	bool told; /* an abort went on the ring links (peer_fail.c, the watch): once */
};

/* ---- ring.c: the ring all-gather over slices ------------------------------- */
/* k slices laid end to end from base: every one unit bytes but the last,
 * which is last bytes (an uneven last instance). */
struct nccom_slices {
	char *base;
	size_t unit, last;
	int k;
	/* check: every record received is held to its slot before it is
	 * passed on (nccom_check_relayed); first is the rank of base's first
	 * record, rec the record size, rank_off where its int rank sits. */
	bool check;
	int first;
	size_t rec, rank_off;
};
/* The records of in (len bytes, ranks first, first+1, ...) held to their
 * slots: a record whose rank is another's was forged, by from, the party
 * that relayed it (every rank checks before it relays). */
NRT_STATUS nccom_check_relayed(const struct nccom_slices *s, int first, const char *in, size_t len, const char *from);
/* One ring of a gather: its two links in g->links, its phase, and the
 * links this rank sends on in a later phase of the gather (watched to the
 * end). */
struct nccom_ring {
	int next, prev;
	uint32_t phase; /* BOOTSTRAP_PHASE_* */
	bool later[NCCOM_MAX_LINKS];
};
/* The ring all-gather over one ring: k-1 steps one way round (upstream's:
 * at step i slice (me - i) mod k to next, (me - i - 1) mod k from prev,
 * BOOTSTRAP_RING_SEND_SLICE / _RECV_SLICE) or, bidirectional
 * (docs/bootstrap-hierarchy.md#bidirectional-ring-all-gather),
 * ceil((k-1)/2) steps of that and, while i < floor((k-1)/2), slice
 * (me + i) mod k to prev while (me + i + 1) mod k comes from next; each
 * received frame exactly its slice's size. The flat ring, an instance's
 * intra ring and the leaders' inter ring all run through it. */
NRT_STATUS nccom_ring_gather(struct nccom_gather *g, const struct nccom_ring *ring, const struct nccom_slices *s, int me);

/* ---- root_exchange.c: a rank's exchange with the root ---------------------- */
/* This rank's INFO_TO_ROOT record (the git hash on a global init). */
NRT_STATUS nccom_fill_info(const struct nccom_bootstrap *b, const nccom_addr *me, bool global, struct extInfoGlobal *info);
/* INFO_TO_ROOT of size bytes, INFO_FROM_ROOT of exactly reply_size; the
 * root link is kept in b->root_fd in the extended framing. */
NRT_STATUS nccom_root_exchange(struct nccom_bootstrap *b, const nccom_addr *root, bool hier, const void *rec, int size, void *reply, int reply_size);
long long nccom_connect_delay_ns(bool hier, int rank, int nranks);

/* ---- hier_rank.c: bootstrapInitWithHierarchy --------------------------------- */
/* INFO_TO_ROOT (extInfoHier), INFO_FROM_ROOT (bootstrap_root_reply_hier), the
 * intra and inter rings wired; me is this rank's listen address. */
NRT_STATUS nccom_hier_join(struct nccom_bootstrap *b, const nccom_addr *root, const nccom_addr *me, int L, uint64_t *cluster_id, time_t *epoch);
/* The all-gather of n records of size bytes: intra ring, leaders' inter
 * ring of instance blocks, then down each intra ring. */
NRT_STATUS nccom_hier_allgather(struct nccom_bootstrap *b, struct nccom_gather *g, char *all, int size);

/* ---- bootstrap.c: bootstrapInit, the all-gather and point-to-point ---------- */
NRT_STATUS nccom_bootstrap_init(const struct ncclUniqueId *id, int rank, int nranks, bool global,
				struct nccom_bootstrap **out, uint64_t *cluster_id, time_t *epoch);
/* The phases a gather's log lines and ABORTs name. */
#define NCCOM_PHASE_ADDRESSES "the bootstrap's all-gather of listen addresses"
#define NCCOM_PHASE_PEERS "initTransportRank AllGather1 (peer records)"
#define NCCOM_PHASE_EXPORT "bootstrapAllGather (neuronBootstrapAllGather)"
NRT_STATUS nccom_bootstrap_allgather(struct nccom_bootstrap *b, void *all, int size, const char *phase);
/* The all-gather of records of size bytes whose int at rank_off names their
 * rank: each is held to its slot as it arrives, before it is relayed, so a
 * forging relay is named (docs/bootstrap-hierarchy.md#forged-relays). */
NRT_STATUS nccom_bootstrap_allgather_records(struct nccom_bootstrap *b, void *all, int size, size_t rank_off, const char *phase);

NRT_STATUS nccom_bootstrap_send(struct nccom_bootstrap *b, int peer, const void *data, int size);
NRT_STATUS nccom_bootstrap_recv(struct nccom_bootstrap *b, int peer, void *data, int size);
void nccom_bootstrap_close(struct nccom_bootstrap *b);

/* ---- comm_live.c: the registry of live comms -------------------------------- */
/* A global init's two maps, built from the gathered peer records after
 * AllGather1 (seed 001 §3), and neuronIsUltraServer's answer; the topology
 * stage that would read them is not provided. */
struct nccom_global_maps {
	int *mla_indexes, *host_device_ids;
	bool built, ultra_server;
};
/* A live comm and, beside it, what the seed keeps in places whose offsets
 * are not documented: the all-gathered peer records and a global init's
 * maps from them (seed 001 §3). */
struct nccom_live {
	struct ncclComm *comm;
	struct ncclPeerInfo *peers;
	struct nccom_global_maps maps;
	/* A split comm's world (split.c): its bootstrap is the world's, reached
	 * only while the world is live; NULL for a comm with its own. */
	const struct ncclComm *world;
	struct nccom_live *next;
};
/* Adds l (NRT_FAILURE when the registry cannot be locked). */
NRT_STATUS nccom_comm_register(struct nccom_live *l);
/* Takes comm's entry out and returns it, NULL when comm is not live. */
struct nccom_live *nccom_comm_unregister(const void *comm);
/* Whether comm is one this library allocated and has not freed; a pointer
 * not in the registry is refused. */
bool nccom_comm_live(const void *comm);
/* This rank and the comm's size; NRT_INVALID when comm is not live. */
NRT_STATUS nccom_comm_rank(void *comm, int *rank, int *nranks);
/* The MLA index of peer's all-gathered record and this comm's device:
 * false when comm is not live, peer not one of its ranks, or its MLA
 * index negative. */
bool nccom_comm_peer_mla(const void *comm, int peer, int *mla, int *dev);
/* The one live world (a global comm of its own) of nranks ranks, and, when
 * cluster is non-NULL, with that cluster id and epoch: 1 found (*world, and
 * a malloc'd copy of its peer records in *peers when peers is non-NULL),
 * 0 none, 2 more than one, -1 no memory or no lock. */
int nccom_comm_world(int nranks, const uint64_t *cluster, const time_t *epoch, struct ncclComm **world, struct ncclPeerInfo **peers);
/* The bootstrap of comm: its own, or a split comm's world's while that is
 * live; NULL when comm is not live or has none. */
struct nccom_bootstrap *nccom_comm_bootstrap(const void *comm);

/* ---- split.c: the split unique id (docs/bootstrap.md#group-comm-split) ----- */
#define NCCOM_UNIQUE_ID_BYTES ((int)NCCL_UNIQUE_ID_BYTES)
struct nccom_split_id {
	uint32_t world_size;
	uint64_t cluster;
	int64_t epoch;
	uint32_t rank_n, root, serial;
};
bool nccom_is_split_id(const char id[NCCOM_UNIQUE_ID_BYTES]);
void nccom_split_encode(const struct nccom_split_id *s, char id[NCCOM_UNIQUE_ID_BYTES]);
/* 1 decoded, 0 no split magic (a root id), -1 refused (one warning line). */
int nccom_split_decode(const char id[NCCOM_UNIQUE_ID_BYTES], struct nccom_split_id *s);
/* ENV_BOOTSTRAP_GROUP_INIT: *split for split or unset, not for flat or
 * hier; anything else NCCOM_INVALID_ARGUMENT with one warning line. */
NRT_STATUS nccom_group_init_split(bool *split);

/* ---- net_plugin.c: the net plugin under libnccom (docs/net-seam.md) ------- */
/* The logger a plugin's init receives (net.h's ncclDebugLogger_t). */
typedef void (*nccom_net_logger)(int level, unsigned long flags, const char *file, int line, const char *fmt, ...);
/* The plugin table in its newest (v6) shape: neuronInitNet fills it from the
 * table it chose; a v4 or v5 member is reached through an adapter in
 * net_plugin.c, so callers never look at the version. A member the table
 * lacks is NULL (v4 and v5 have no fini, v4 no getMrKey). */
struct nccom_net {
	int version; /* 6, 5 or 4 */
	const void *table; /* the ncclNetPlugin_vN object */
	const char *name; /* the table's name member */
	char path[256]; /* where the dynamic linker found the plugin */
	int ndev;
	ncclResult_t (*fini)(void);
	ncclResult_t (*get_properties)(int dev, ncclNetProperties_v6_t *props);
	ncclResult_t (*listen)(int dev, void *handle, void **listen_comm);
	ncclResult_t (*connect)(int dev, void *handle, void **send_comm);
	ncclResult_t (*accept)(void *listen_comm, void **recv_comm);
	ncclResult_t (*reg_mr)(void *comm, void *data, size_t size, int type, void **mhandle);
	ncclResult_t (*dereg_mr)(void *comm, void *mhandle);
	ncclResult_t (*isend)(void *send_comm, void *data, int size, void *mhandle, void **request);
	ncclResult_t (*irecv)(void *recv_comm, void *data, int size, void *mhandle, void **request);
	ncclResult_t (*iflush)(void *recv_comm, void *data, int size, void *mhandle, void **request);
	ncclResult_t (*test)(void *request, int *done, int *size);
	ncclResult_t (*close_send)(void *send_comm);
	ncclResult_t (*close_recv)(void *recv_comm);
	ncclResult_t (*close_listen)(void *listen_comm);
	ncclResult_t (*get_mr_key)(void *mhandle, uint64_t *key);
};
/* The plugin neuronInitNet loaded, NULL before (and after neuronFiniPlugin). */
const struct nccom_net *nccom_net_plugin(void);
/* The one error line of a plugin call: "NET/Plugin <path> (<table>):
 * <member> returned <rc> (<peer>)"; returns what the entry point returns. */
NRT_STATUS nccom_net_fail(const struct nccom_net *n, const char *member, ncclResult_t rc, const char *peer);
/* The plugin, or the error line saying none is loaded and why; entry names
 * the export that asked. */
const struct nccom_net *nccom_net_need(const char *entry);
/* The handle size of the chosen table: 128, or 64 for v4. */
int nccom_net_handle_size(const struct nccom_net *n);

/* ---- net_conn.c: connectors (docs/net-seam.md#connectors) ------------------ */
/* One direction of one peer of a comm's pattern: the plugin comms and the
 * registrations made on them through neuronNetRegMr. */
struct nccom_mr {
	void *plugin_comm, *mhandle;
	const char *data;
	size_t size;
	struct nccom_mr *next;
};
struct nccom_connector {
	void *comm; /* the ncclComm */
	enc_pattern_t pattern;
	int peer;
	bool is_send;
	void *send_comm, *recv_comm, *listen_comm;
	char label[64]; /* "send to rank 3 (mesh)" */
	struct nccom_mr *mrs;
	struct nccom_connector *next;
};
/* The connector of (pattern, peer, direction) of comm, NULL when none was built. */
struct nccom_connector *nccom_connector_find(void *comm, enc_pattern_t pattern, int peer, bool is_send);
/* Whether mh is a registration neuronNetRegMr made on c's plugin comm pc
 * that covers size bytes at data: the proxy hands only those to the plugin. */
bool nccom_connector_covers(struct nccom_connector *c, void *pc, void *mh, const void *data, size_t size);
/* The connectors of comm, their registrations released first; neuronFreeComm
 * calls it after nccom_proxy_comm_free. */
void nccom_connector_comm_free(void *comm);

/* ---- net_proxy.c: the network proxy (docs/net-seam.md#proxy) --------------- */
/* The proxies of comm, drained and dropped; neuronFreeComm calls it. */
void nccom_proxy_comm_free(void *comm);

#endif
