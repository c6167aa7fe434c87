/*
 * The net plugin under libnccom (docs/net-seam.md#plugin-choice): libnrt
 * soft-loads libnccom-net.so and hands its handle over through
 * nrt_get_libnccl_net (reverse leg); neuronInitNet dlsyms the newest table
 * the plugin exports that this library understands (ncclNetPlugin_v6, then
 * _v5, then _v4, extension net-plugin-choice), checks the members every
 * entry point forwards to, and presents it in the v6 shape (struct
 * nccom_net). The tables' layouts are the generated ones (spec
 * net_plugin.toml); the typed views below are held to them member by
 * member.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccom.h"

typedef ncclResult_t (*init_fn)(nccom_net_logger log);

/* The v6 and v5 tables' common tail from listen on; v5 lacks fini. */
#define NCCOM_NET_COMMON                                                                                         \
	ncclResult_t (*listen)(int dev, void *handle, void **listen_comm);                                      \
	ncclResult_t (*connect)(int dev, void *handle, void **send_comm);                                       \
	ncclResult_t (*accept)(void *listen_comm, void **recv_comm);                                            \
	ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);                   \
	void *regMrDmaBuf;                                                                                      \
	ncclResult_t (*deregMr)(void *comm, void *mhandle);                                                     \
	ncclResult_t (*isend)(void *send_comm, void *data, int size, int tag, void *mhandle, void **request);   \
	ncclResult_t (*irecv)(void *recv_comm, int n, void **data, int *sizes, int *tags, void **mhandles,      \
			      void **request);                                                                  \
	ncclResult_t (*iflush)(void *recv_comm, int n, void **data, int *sizes, void **mhandles, void **request); \
	ncclResult_t (*test)(void *request, int *done, int *sizes);                                             \
	ncclResult_t (*closeSend)(void *send_comm);                                                             \
	ncclResult_t (*closeRecv)(void *recv_comm);                                                             \
	ncclResult_t (*closeListen)(void *listen_comm);                                                         \
	ncclResult_t (*getMrKey)(void *mhandle, uint64_t *key);                                                 \
	void *iwrite, *iwriteInline, *iread;

struct net_v6 {
	const char *name;
	init_fn init;
	ncclResult_t (*fini)(void);
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v6_t *props);
	NCCOM_NET_COMMON
};
struct net_v5 {
	const char *name;
	init_fn init;
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v6_t *props);
	NCCOM_NET_COMMON
};
struct net_v4 {
	const char *name;
	init_fn init;
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v4_t *props);
	ncclResult_t (*listen)(int dev, void *handle, void **listen_comm);
	ncclResult_t (*connect)(int dev, void *handle, void **send_comm);
	ncclResult_t (*accept)(void *listen_comm, void **recv_comm);
	ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
	ncclResult_t (*deregMr)(void *comm, void *mhandle);
	ncclResult_t (*isend)(void *send_comm, void *data, int size, void *mhandle, void **request);
	ncclResult_t (*irecv)(void *recv_comm, void *data, int size, void *mhandle, void **request);
	ncclResult_t (*iflush)(void *recv_comm, void *data, int size, void *mhandle, void **request);
	ncclResult_t (*test)(void *request, int *done, int *size);
	ncclResult_t (*closeSend)(void *send_comm);
	ncclResult_t (*closeRecv)(void *recv_comm);
	ncclResult_t (*closeListen)(void *listen_comm);
};

/* Each typed view is the generated layout (spec net_plugin.toml). */
#define SAME(view, gen, m) _Static_assert(offsetof(struct view, m) == offsetof(gen, m), #view "." #m " is the spec's offset")
_Static_assert(sizeof(struct net_v6) == sizeof(ncclNet_v6_t), "ncclNet_v6_t size");
_Static_assert(sizeof(struct net_v5) == sizeof(ncclNet_v5_t), "ncclNet_v5_t size");
_Static_assert(sizeof(struct net_v4) == sizeof(ncclNet_v4_t), "ncclNet_v4_t size");
SAME(net_v6, ncclNet_v6_t, fini);
SAME(net_v6, ncclNet_v6_t, listen);
SAME(net_v6, ncclNet_v6_t, regMrDmaBuf);
SAME(net_v6, ncclNet_v6_t, isend);
SAME(net_v6, ncclNet_v6_t, test);
SAME(net_v6, ncclNet_v6_t, closeListen);
SAME(net_v6, ncclNet_v6_t, getMrKey);
SAME(net_v6, ncclNet_v6_t, iread);
SAME(net_v5, ncclNet_v5_t, devices);
SAME(net_v5, ncclNet_v5_t, listen);
SAME(net_v5, ncclNet_v5_t, getMrKey);
SAME(net_v5, ncclNet_v5_t, iread);
SAME(net_v4, ncclNet_v4_t, listen);
SAME(net_v4, ncclNet_v4_t, deregMr);
SAME(net_v4, ncclNet_v4_t, isend);
SAME(net_v4, ncclNet_v4_t, closeListen);

static pthread_mutex_t net_mu = PTHREAD_MUTEX_INITIALIZER;
static struct nccom_net net;
static bool net_loaded;
/* The v5/v6 table the adapters call (one plugin per process). */
static const struct net_v6 *v6;
static const struct net_v5 *v5;
static const struct net_v4 *v4;

/* ---- the v6/v5 shapes as the one-buffer calls of neuronNetIsend/Irecv/Iflush */
static ncclResult_t isend_tag0(void *c, void *data, int size, void *mh, void **req)
{
	return v6 ? v6->isend(c, data, size, 0, mh, req) : v5->isend(c, data, size, 0, mh, req);
}
static ncclResult_t irecv_one(void *c, void *data, int size, void *mh, void **req)
{
	int tag = 0;
	return v6 ? v6->irecv(c, 1, &data, &size, &tag, &mh, req) : v5->irecv(c, 1, &data, &size, &tag, &mh, req);
}
static ncclResult_t iflush_one(void *c, void *data, int size, void *mh, void **req)
{
	return v6 ? v6->iflush(c, 1, &data, &size, &mh, req) : v5->iflush(c, 1, &data, &size, &mh, req);
}
/* v4's properties widened to v6's (the fields v4 lacks zero). */
static ncclResult_t props_v4(int dev, ncclNetProperties_v6_t *p)
{
	ncclNetProperties_v4_t p4;
	memset(&p4, 0, sizeof p4);
	ncclResult_t rc = v4->getProperties(dev, &p4);
	if (rc != ncclSuccess)
		return rc;
	memset(p, 0, sizeof *p);
	p->name = p4.name;
	p->pciPath = p4.pciPath;
	p->guid = p4.guid;
	p->ptrSupport = p4.ptrSupport;
	p->speed = p4.speed;
	p->port = p4.port;
	p->maxComms = p4.maxComms;
	return ncclSuccess;
}

/* The plugin's log lines, through ours (escaped there). */
static void plugin_log(int level, unsigned long flags, const char *file, int line, const char *fmt, ...)
{
	(void)flags;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	if (vsnprintf(msg, sizeof msg, fmt, ap) < 0)
		msg[0] = 0;
	va_end(ap);
	/* NCCL_LOG_WARN = 2 (net.h) */
	if (level == 2)
		nccom_warn("NET/Plugin %s:%d: %s", file ? file : "?", line, msg);
	else
		nccom_info("NET/Plugin %s:%d: %s", file ? file : "?", line, msg);
}

/* The first member of the v6 shape the table leaves NULL, or NULL. */
static const char *missing_member(const struct nccom_net *n)
{
#define NEED_M(f, name)           \
	if (n->f == NULL)         \
		return name;
	NEED_M(listen, "listen")
	NEED_M(connect, "connect")
	NEED_M(accept, "accept")
	NEED_M(reg_mr, "regMr")
	NEED_M(dereg_mr, "deregMr")
	NEED_M(isend, "isend")
	NEED_M(irecv, "irecv")
	NEED_M(test, "test")
	NEED_M(close_send, "closeSend")
	NEED_M(close_recv, "closeRecv")
	NEED_M(close_listen, "closeListen")
#undef NEED_M
	return NULL;
}

/* The members v6 and v5 share, by name (their offsets are asserted above). */
#define FILL_COMMON(n, t)                                                                                       \
	do {                                                                                                    \
		(n)->listen = (t)->listen, (n)->connect = (t)->connect, (n)->accept = (t)->accept;              \
		(n)->reg_mr = (t)->regMr, (n)->dereg_mr = (t)->deregMr;                                         \
		(n)->isend = (t)->isend ? isend_tag0 : NULL;                                                    \
		(n)->irecv = (t)->irecv ? irecv_one : NULL;                                                     \
		(n)->iflush = (t)->iflush ? iflush_one : NULL;                                                  \
		(n)->test = (t)->test, (n)->close_send = (t)->closeSend, (n)->close_recv = (t)->closeRecv;      \
		(n)->close_listen = (t)->closeListen, (n)->get_mr_key = (t)->getMrKey;                          \
	} while (0)

/* Takes table version ver of the plugin at handle into n, or says why not
 * (why empty: the symbol is absent). */
static void *take(void *handle, int ver, struct nccom_net *n, init_fn *init, ncclResult_t (**devices)(int *), char *why, size_t len)
{
	const char *sym = ver == 6 ? NCCL_NET_PLUGIN_V6_SYMBOL : ver == 5 ? NCCL_NET_PLUGIN_V5_SYMBOL : NCCL_NET_PLUGIN_V4_SYMBOL;
	void *t = dlsym(handle, sym);
	why[0] = 0;
	if (t == NULL)
		return NULL;
	memset(n, 0, sizeof *n);
	n->version = ver;
	n->table = t;
	v6 = NULL, v5 = NULL, v4 = NULL;
	if (ver == 6) {
		v6 = t;
		n->name = v6->name, *init = v6->init, *devices = v6->devices;
		n->fini = v6->fini;
		n->get_properties = v6->getProperties;
		FILL_COMMON(n, v6);
	} else if (ver == 5) {
		v5 = t;
		n->name = v5->name, *init = v5->init, *devices = v5->devices;
		n->get_properties = v5->getProperties;
		FILL_COMMON(n, v5);
	} else {
		v4 = t;
		n->name = v4->name, *init = v4->init, *devices = v4->devices;
		n->get_properties = v4->getProperties ? props_v4 : NULL;
		n->listen = v4->listen, n->connect = v4->connect, n->accept = v4->accept;
		n->reg_mr = v4->regMr, n->dereg_mr = v4->deregMr;
		n->isend = v4->isend, n->irecv = v4->irecv, n->iflush = v4->iflush, n->test = v4->test;
		n->close_send = v4->closeSend, n->close_recv = v4->closeRecv, n->close_listen = v4->closeListen;
	}
	const char *m = n->name == NULL ? "name" : *init == NULL ? "init" : *devices == NULL ? "devices" : missing_member(n);
	if (m != NULL) {
		snprintf(why, len, "%s has a NULL %s member", sym, m);
		return NULL;
	}
	return t;
}

static void plugin_path(void *handle, char *out, size_t n)
{
	struct link_map *lm = NULL;
	if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL || lm->l_name == NULL || lm->l_name[0] == 0)
		snprintf(out, n, "%s", NCCOM_NET_LIBRARY);
	else
		nccom_escape(lm->l_name, strlen(lm->l_name), out, n);
}

/* initPlugin: once per process (docs/sources.md#s001-5: ncclInit's initPlugin). */
static NRT_STATUS init_plugin(void)
{
	if (net_loaded)
		return NRT_SUCCESS;
	int err = 0;
	char msg[256] = {0};
	void *handle = nrt_get_libnccl_net(&err, msg, sizeof msg); /* reverse leg, @NRT_2.0.0 */
	if (handle == NULL) {
		char esc[NCCOM_ESCAPED_SIZE(sizeof msg)];
		nccom_warn("neuronInitNet: libnrt holds no %s (nrt_get_libnccl_net: %s); the net entry points need it (NRTABI_NET_PLUGIN names one)",
			   NCCOM_NET_LIBRARY, nccom_escape(msg, strnlen(msg, sizeof msg), esc, sizeof esc));
		return NRT_FAILURE;
	}
	struct nccom_net n;
	char path[sizeof n.path];
	plugin_path(handle, path, sizeof path);
	init_fn init = NULL;
	ncclResult_t (*devices)(int *) = NULL;
	char why[3][160];
	void *t = NULL;
	for (int ver = 6; ver >= 4 && t == NULL; ver--)
		t = take(handle, ver, &n, &init, &devices, why[6 - ver], sizeof why[0]);
	if (t == NULL) {
		nccom_warn("NET/Plugin %s: no usable table: %s; %s; %s", path,
			   why[0][0] ? why[0] : NCCL_NET_PLUGIN_V6_SYMBOL " absent", why[1][0] ? why[1] : NCCL_NET_PLUGIN_V5_SYMBOL " absent",
			   why[2][0] ? why[2] : NCCL_NET_PLUGIN_V4_SYMBOL " absent");
		v6 = NULL, v5 = NULL, v4 = NULL;
		return NRT_FAILURE;
	}
	snprintf(n.path, sizeof n.path, "%s", path);
	ncclResult_t rc = init(plugin_log);
	if (rc != ncclSuccess)
		return nccom_net_fail(&n, "init", rc, "no peer");
	rc = devices(&n.ndev);
	if (rc != ncclSuccess)
		return nccom_net_fail(&n, "devices", rc, "no peer");
	if (n.ndev <= 0) {
		nccom_warn("NET/Plugin %s (ncclNetPlugin_v%d): devices reports %d devices; the net entry points need one", n.path, n.version, n.ndev);
		if (n.fini != NULL && n.fini() != ncclSuccess)
			nccom_warn("NET/Plugin %s: fini failed", n.path);
		return NRT_FAILURE;
	}
	char name[64];
	nccom_info("NET/Plugin %s: using ncclNetPlugin_v%d \"%s\", %d devices", n.path, n.version,
		   nccom_escape(n.name, strnlen(n.name, 48), name, sizeof name), n.ndev);
	net = n;
	net_loaded = true;
	return NRT_SUCCESS;
}

const struct nccom_net *nccom_net_plugin(void)
{
	if (pthread_mutex_lock(&net_mu) != 0)
		return NULL;
	const struct nccom_net *n = net_loaded ? &net : NULL;
	if (pthread_mutex_unlock(&net_mu) != 0)
		return NULL;
	return n;
}

const struct nccom_net *nccom_net_need(const char *entry)
{
	const struct nccom_net *n = nccom_net_plugin();
	if (n == NULL)
		nccom_warn("%s: no net plugin is loaded (neuronInitNet first)", entry);
	return n;
}

NRT_STATUS nccom_net_fail(const struct nccom_net *n, const char *member, ncclResult_t rc, const char *peer)
{
	nccom_warn("NET/Plugin %s (ncclNetPlugin_v%d): %s returned %d (%s)", n->path, n->version, member, (int)rc, peer);
	return NRT_FAILURE;
}

int nccom_net_handle_size(const struct nccom_net *n)
{
	return n->version == 4 ? NCCL_NET_HANDLE_MAXSIZE_V4 : NCCL_NET_HANDLE_MAXSIZE;
}

/* ncclInit's part of the net (docs/sources.md#s001-5): initPlugin, then the
 * bootstrap network on the root's subnet when a root comm id is given. */
NRT_STATUS neuronInitNet(char *root_comm_id)
{
	if (pthread_mutex_lock(&net_mu) != 0)
		return NRT_FAILURE;
	NRT_STATUS rc = init_plugin();
	if (pthread_mutex_unlock(&net_mu) != 0)
		return NRT_FAILURE;
	if (rc != NRT_SUCCESS)
		return rc;
	nccom_addr root;
	if (root_comm_id != NULL && root_comm_id[0] != 0) {
		if (!nccom_parse_addr(root_comm_id, &root)) {
			char esc[NCCOM_ESCAPED_SIZE(64)];
			nccom_warn("Invalid Comm Id [%s], please use format: <ipv4>:<port> | [<ipv6>]:<port> | <hostname>:<port>",
				   nccom_escape(root_comm_id, strnlen(root_comm_id, 64), esc, sizeof esc));
			return NCCOM_INVALID_ARGUMENT;
		}
		return nccom_net_init(&root);
	}
	return nccom_net_init(NULL);
}

NRT_STATUS neuronFiniPlugin(void)
{
	if (pthread_mutex_lock(&net_mu) != 0)
		return NRT_FAILURE;
	NRT_STATUS st = NRT_SUCCESS;
	if (!net_loaded) {
		nccom_warn("neuronFiniPlugin: no net plugin is loaded (neuronInitNet loads one)");
		st = NRT_INVALID;
	} else if (net.fini != NULL) {
		ncclResult_t rc = net.fini();
		if (rc != ncclSuccess)
			st = nccom_net_fail(&net, "fini", rc, "no peer");
	}
	/* The handle stays libnrt's: it soft-loaded it and owns the dlclose. */
	net_loaded = false;
	v6 = NULL, v5 = NULL, v4 = NULL;
	if (pthread_mutex_unlock(&net_mu) != 0)
		return NRT_FAILURE;
	return st;
}

/* extension net-ofi-handle: the chosen table. */
NRT_STATUS neuronGetOFIHandle(void **out)
{
	if (out == NULL)
		return NRT_INVALID;
	const struct nccom_net *n = nccom_net_need(__func__);
	if (n == NULL)
		return NRT_FAILURE;
	*out = (void *)n->table;
	return NRT_SUCCESS;
}
