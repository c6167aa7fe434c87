#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "nrtabi.h"
#include "nrt_slots.h"
#include "handoff.h"

void *nrt_nccl_net_handle;
char nrt_nccl_net_error[512];

static void zero_all_slots(void)
{
	memset(&nrt_nccl_slots, 0, sizeof nrt_nccl_slots);
}

/* record(nccl_init_error, ...): writing to the stream is what arms it; its
 * state stays good, as an ostringstream's does after a successful write. */
__attribute__((format(printf, 1, 2))) static void arm(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(nrt_nccl_init_error.msg, sizeof nrt_nccl_init_error.msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof nrt_nccl_init_error.msg)
		n = sizeof nrt_nccl_init_error.msg - 1;
	nrt_nccl_init_error.len = (size_t)n;
	nrt_nccl_init_error.state = 0;
}

static void **slot_at(size_t offset)
{
	return (void **)((char *)&nrt_nccl_slots + offset);
}

static const char *reason(void)
{
	const char *e = dlerror();
	return e ? e : "dlsym returned NULL";
}

/* The first of the plugin tables (NULL-terminated, newest first) that net
 * exports, or NULL. */
static const char *net_table(void *net, const char *const *tables)
{
	for (; tables != NULL && *tables != NULL; tables++)
		if (dlsym(net, *tables) != NULL)
			return *tables;
	return NULL;
}

/* On failure, libfabric's presence decides what to tell the operator; either
 * way the runtime carries on without the plugin. A file that loads but
 * exports none of the plugin tables is no plugin: it is closed and refused
 * by name, never handed to libnccom (docs/runtime-boundary.md#the-net-plugin).
 * The wording is nrtabi's. */
static void load_net_plugin(const char *net_library, const char *const *tables)
{
	dlerror();
	void *net = dlopen(net_library, NCCOM_RTLD_FLAGS);
	if (net != NULL && net_table(net, tables) != NULL) {
		nrt_nccl_net_handle = net;
		nrt_nccl_log(NRT_NCCL_LOG_INFO, "ncclInit", NRTABI_MSG_NCCL_NET_PLUGIN);
		return;
	}
	if (net != NULL) {
		char names[256] = "";
		for (const char *const *t = tables; t != NULL && *t != NULL; t++) {
			size_t used = strlen(names);
			snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", *t);
		}
		snprintf(nrt_nccl_net_error, sizeof nrt_nccl_net_error,
			 "%s is not a net plugin: it exports none of %s", net_library, names);
		if (dlclose(net) != 0)
			nrt_nccl_log(NRT_NCCL_LOG_ERROR, "ncclInit", "dlclose %s: %s", net_library, reason());
		nrt_nccl_log(NRT_NCCL_LOG_ERROR, "ncclInit", "%s", nrt_nccl_net_error);
		return;
	}
	snprintf(nrt_nccl_net_error, sizeof nrt_nccl_net_error, "%s", reason());
	unsigned (*fi_version)(void) = (unsigned (*)(void))dlsym(RTLD_DEFAULT, LIBFABRIC_PROBE_SYMBOL);
	if (fi_version != NULL) {
		unsigned v = fi_version();
		nrt_nccl_log(NRT_NCCL_LOG_INFO, "ncclInit", "%s not loaded (%s); libfabric %u.%u is present",
			     net_library, nrt_nccl_net_error, v >> 16, v & 0xffff);
	} else {
		nrt_nccl_log(NRT_NCCL_LOG_INFO, "ncclInit",
			     "%s not loaded (%s); libfabric not found (no %s): install the EFA software for network collectives",
			     net_library, nrt_nccl_net_error, LIBFABRIC_PROBE_SYMBOL);
	}
}

NRT_STATUS nrt_handoff_run(const char *library, const char *net_library, const char *const *net_tables,
			   struct nrt_handoff_outcome *out)
{
	memset(out, 0, sizeof *out);
	out->missing = -1;

	dlerror();
	void *handle = dlopen(library, NCCOM_RTLD_FLAGS);
	if (handle == NULL) {
		zero_all_slots();
		arm(NRTABI_MSG_NCCL_DLOPEN_FAILED, reason());
		out->stage = NRT_HANDOFF_DLOPEN;
		return NRT_FAILURE;
	}
	out->handle = handle;

	/* Gate #0: the version probe is resolved and asked before any other
	 * entry point is touched. */
	const struct nrt_nccl_symbol *probe = &nrt_nccl_dlsym_order[0];
	dlerror();
	void *p = dlsym(handle, probe->name);
	if (p == NULL) {
		zero_all_slots();
		arm(NRTABI_MSG_NCCL_NO_PROBE);
		out->stage = NRT_HANDOFF_NO_PROBE;
		return NRT_FAILURE;
	}
	*slot_at(probe->offset) = p;
	ncclGetVersionInfo(&out->version, VERSION_INFO_SIZE);
	out->probed = 1;
	if (out->version.compatibility_version != NCCOM_COMPAT_ID) {
		/* The table is only ever all valid or all NULL: the probe goes too. */
		zero_all_slots();
		arm(NRTABI_MSG_NCCL_INCOMPATIBLE, (unsigned long)out->version.compatibility_version);
		out->stage = NRT_HANDOFF_INCOMPATIBLE;
		return NRT_FAILURE;
	}
	char git[sizeof out->version.git_hash + 1];
	memcpy(git, out->version.git_hash, sizeof out->version.git_hash);
	git[sizeof out->version.git_hash] = '\0';
	nrt_nccl_log(NRT_NCCL_LOG_INFO, "check_version", NRTABI_MSG_NCCL_USING_CCOM,
		     (unsigned long)out->version.major, (unsigned long)out->version.minor,
		     (unsigned long)out->version.patch, (unsigned long)out->version.maintenance, git);

	/* The other entry points, in the fixed order, all or nothing: the first
	 * NULL discards every slot already filled. */
	for (int i = 1; i < NRT_NCCL_SLOT_COUNT; i++) {
		const struct nrt_nccl_symbol *sym = &nrt_nccl_dlsym_order[i];
		dlerror();
		p = dlsym(handle, sym->name);
		if (p == NULL) {
			char why[256];
			snprintf(why, sizeof why, "%s", reason());
			nrt_nccl_log(NRT_NCCL_LOG_ERROR, "ncclInit", NRTABI_MSG_NCCL_MISSING_SYMBOL, sym->name, why);
			zero_all_slots();
			arm(NRTABI_MSG_NCCL_MISSING_SYMBOL, sym->name, why);
			out->stage = NRT_HANDOFF_MISSING;
			out->missing = i;
			return NRT_FAILURE;
		}
		*slot_at(sym->offset) = p;
	}

	load_net_plugin(net_library, net_tables);
	return NRT_SUCCESS;
}

int nrt_handoff_valid_slots(void)
{
	int n = 0;
	for (int i = 0; i < NRT_NCCL_SLOT_COUNT; i++)
		if (*slot_at(nrt_nccl_dlsym_order[i].offset) != NULL)
			n++;
	return n;
}

size_t nrt_handoff_sentinel(char *msg, size_t n)
{
	if (n > 0)
		snprintf(msg, n, "%.*s", (int)nrt_nccl_init_error.len, nrt_nccl_init_error.msg);
	return nrt_nccl_init_error.len;
}
