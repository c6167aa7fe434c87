/*
 * NIC preference and thread affinity, whose bodies the documents do not
 * give: extensions net-nic-preference and net-affinity
 * (docs/net-seam.md#nic-preference, docs/net-seam.md#affinity).
 */
#include <ctype.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "nccom.h"

static int preferred(const struct nccom_net *n, uint32_t nc, uint32_t rid)
{
	return (int)(((uint64_t)nc + rid) % (uint64_t)n->ndev);
}

NRT_STATUS neuronPreferredNcRidNic(uint32_t nc, uint32_t rid, int *out)
{
	if (out == NULL)
		return NRT_INVALID;
	const struct nccom_net *n = nccom_net_need(__func__);
	if (n == NULL)
		return NRT_FAILURE;
	*out = preferred(n, nc, rid);
	return NRT_SUCCESS;
}

/* "dddd:bb:dd.f", hex digits. */
static bool is_bdf(const char *s)
{
	static const char shape[] = "xxxx:xx:xx.x";
	if (strlen(s) != sizeof shape - 1)
		return false;
	for (size_t i = 0; shape[i]; i++)
		if (shape[i] == 'x' ? !isxdigit((unsigned char)s[i]) : s[i] != shape[i])
			return false;
	return true;
}

NRT_STATUS neuronPreferredNcRidNicBdf(uint32_t nc, uint32_t rid, char *bdf, size_t bdf_len)
{
	if (bdf == NULL || bdf_len == 0)
		return NRT_INVALID;
	bdf[0] = 0;
	const struct nccom_net *n = nccom_net_need(__func__);
	if (n == NULL)
		return NRT_FAILURE;
	if (n->get_properties == NULL) {
		nccom_warn("NET/Plugin %s (ncclNetPlugin_v%d): the table has no getProperties, so no PCI address", n->path, n->version);
		return NRT_FAILURE;
	}
	int dev = preferred(n, nc, rid);
	ncclNetProperties_v6_t p;
	memset(&p, 0, sizeof p);
	ncclResult_t rc = n->get_properties(dev, &p);
	if (rc != ncclSuccess) {
		char peer[32];
		snprintf(peer, sizeof peer, "device %d", dev);
		return nccom_net_fail(n, "getProperties", rc, peer);
	}
	const char *last = p.pciPath ? strrchr(p.pciPath, '/') : NULL;
	last = last ? last + 1 : p.pciPath;
	if (last == NULL || !is_bdf(last)) {
		char esc[NCCOM_ESCAPED_SIZE(64)];
		nccom_warn("NET/Plugin %s: device %d has no PCI address (pciPath %s)", n->path, dev,
			   p.pciPath ? nccom_escape(p.pciPath, strnlen(p.pciPath, 64), esc, sizeof esc) : "NULL");
		return NRT_FAILURE;
	}
	if (strlen(last) + 1 > bdf_len)
		return NRT_INVALID;
	memcpy(bdf, last, strlen(last) + 1);
	return NRT_SUCCESS;
}

NRT_STATUS neuronSetAffinity(void *comm, cpu_set_t *override, cpu_set_t *save, int core)
{
	(void)comm; /* every comm of a process shares its threads */
	if (save == NULL)
		return NRT_INVALID;
	pthread_t self = pthread_self();
	int e = pthread_getaffinity_np(self, sizeof *save, save);
	if (e != 0) {
		nccom_warn("%s: pthread_getaffinity_np: %s", __func__, strerror(e));
		return NRT_FAILURE;
	}
	cpu_set_t want;
	if (override != NULL) {
		want = *override;
	} else if (core >= 0) {
		int k = CPU_COUNT(save);
		if (k == 0)
			return NRT_FAILURE;
		int pick = core % k, seen = 0, cpu = -1;
		for (int c = 0; c < CPU_SETSIZE && cpu < 0; c++)
			if (CPU_ISSET(c, save) && seen++ == pick)
				cpu = c;
		CPU_ZERO(&want);
		CPU_SET(cpu, &want);
	} else {
		return NRT_SUCCESS;
	}
	e = pthread_setaffinity_np(self, sizeof want, &want);
	if (e != 0) {
		nccom_warn("%s: pthread_setaffinity_np (core %d): %s", __func__, core, strerror(e));
		return NRT_FAILURE;
	}
	return NRT_SUCCESS;
}
