/*
 * The end-to-end host: a small C program linked against nrtabi's
 * libnrt.so.1 (DT_NEEDED, imports @NRT_2.0.0), run under the real dynamic
 * linker. libnrt dlopens a libnccom double, which binds back into libnrt.
 *
 *   host run TOPOLOGY LIBNCCOM          init, the table, every forward entry point twice
 *   host concurrent N TOPOLOGY LIBNCCOM N threads call nrtabi_init at once
 *   host reverse TOPOLOGY LIBNCCOM      init, then call the 20 reverse callbacks directly
 *   host hostile TOPOLOGY LIBNCCOM      absurd lengths and NULL out-pointers across the boundary
 *
 * "-" for TOPOLOGY or LIBNCCOM means the default (the embedded topology, the
 * spec's "libnccom.so" through the normal search path).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nrtabi.h"
#include "nrtabi_runtime.h"

static const char *arg(const char *s) { return strcmp(s, "-") == 0 ? NULL : s; }

static int nslots(void)
{
	int n = 0;
	nrtabi_ccom_state(&n, NULL, NULL, 0);
	return n;
}

static void state(const char *when)
{
	char msg[1200];
	int armed = 0, slots = 0;
	int valid = nrtabi_ccom_state(&slots, &armed, msg, sizeof msg);
	printf("%s: %d/%d slots valid, sentinel %s%s\n", when, valid, slots, armed ? "armed: " : "clear", armed ? msg : "");
}

static int run(const char *topo, const char *lib)
{
	char out[512];
	uint32_t st = nrtabi_init(arg(topo), arg(lib));
	printf("nrtabi_init: status %u\n", st);
	state("after init");
	int n = nslots();
	for (int i = 0; i < n; i++) {
		uint32_t rc = nrtabi_ccom_call(i, out, sizeof out);
		printf("  #%-2d rc=%-4u %s\n", i, rc, out);
	}
	/* Again: a sentinel that was "cleared" after reporting is still armed. */
	uint32_t again[128];
	for (int i = 0; i < n && i < 128; i++)
		again[i] = nrtabi_ccom_call(i, out, sizeof out);
	printf("again:");
	for (int i = 0; i < n && i < 128; i++)
		printf(" %u", again[i]);
	printf("\n");
	state("after the calls");
	int err = -1;
	char why[256];
	void *net = nrt_get_libnccl_net(&err, why, sizeof why);
	printf("nrt_get_libnccl_net: %s, err %d, \"%s\"\n", net ? "a handle" : "NULL", err, why);
	if (net != NULL) {
		void *h = dlopen(NCCOM_NET_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
		printf("  it is the loaded %s: %s\n", NCCOM_NET_LIBRARY, h == net ? "yes" : "NO");
		if (h != NULL)
			dlclose(h);
	}
	return 0;
}

struct racer {
	pthread_barrier_t *go;
	const char *topo, *lib;
	uint32_t st;
};

static void *race(void *p)
{
	struct racer *r = p;
	pthread_barrier_wait(r->go);
	r->st = nrtabi_init(r->topo, r->lib);
	return NULL;
}

static int concurrent(int n, const char *topo, const char *lib)
{
	pthread_barrier_t go;
	pthread_t th[64];
	struct racer rs[64];
	if (n < 1 || n > 64)
		return 2;
	pthread_barrier_init(&go, NULL, (unsigned)n);
	for (int i = 0; i < n; i++) {
		rs[i] = (struct racer){.go = &go, .topo = arg(topo), .lib = arg(lib)};
		pthread_create(&th[i], NULL, race, &rs[i]);
	}
	int same = 1;
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		same &= rs[i].st == rs[0].st;
	}
	printf("%d threads called nrtabi_init at once: %s, status %u\n", n, same ? "one outcome" : "DIFFERENT OUTCOMES", rs[0].st);
	state("after init");
	return same ? 0 : 1;
}

/* The dynamic-input table of docs/runtime-boundary.md#dynamic-input-memory, built by hand. */
struct dyn3 {
	uint32_t magic, rank_n;
	uint64_t reserved;
	uint64_t send_count[3], send_offset[3], recv_offset[3], recv_size[3];
};

static void fill(void *p, size_t n) { memset(p, 0xaa, n); }

static int reverse(const char *topo, const char *lib)
{
	printf("nrtabi_init: status %u\n", nrtabi_init(arg(topo), arg(lib)));

	int devs[8];
	int n = nec_get_device_count(devs, 8);
	printf("nec_get_device_count: %d [", n);
	for (int i = 0; i < n && i < 8; i++)
		printf("%s%d", i ? " " : "", devs[i]);
	printf("]; with a NULL array: %d\n", nec_get_device_count(NULL, 0));

	uint32_t dom = 0, bus = 0;
	uint8_t slot = 0, fn = 0;
	int rc = nec_get_device_pci_bdf(devs[n - 1], &dom, &bus, &slot, &fn);
	printf("nec_get_device_pci_bdf(%d): %d %04x:%02x:%02x.%x\n", devs[n - 1], rc, dom, bus, slot, fn);
	printf("nec_get_device_pci_bdf(99): %d\n", nec_get_device_pci_bdf(99, &dom, &bus, &slot, &fn));

	uint32_t vcs = 0;
	NRT_STATUS s = nec_get_virtual_core_size(&vcs);
	printf("nec_get_virtual_core_size: status %d, %u\n", s, vcs);

	int mla[6], host[6];
	s = nec_build_port_and_rid_map(0, mla, host, 6);
	printf("nec_build_port_and_rid_map(0, 6): status %d, mla [%d %d %d %d %d %d] host [%d %d %d %d %d %d]\n", s,
	       mla[0], mla[1], mla[2], mla[3], mla[4], mla[5], host[0], host[1], host[2], host[3], host[4], host[5]);
	printf("nec_build_port_and_rid_map(99, 6): status %d\n", nec_build_port_and_rid_map(99, mla, host, 6));

	printf("nec_is_mla_available: (0,1)=%d (0,99)=%d\n", nec_is_mla_available(0, 1), nec_is_mla_available(0, 99));
	printf("nec_mla_idx_to_rid(0,2)=%d nec_rid_to_mla_idx(0,3)=%d nec_rid_to_mla_idx(0,99)=%d\n",
	       nec_mla_idx_to_rid(0, 2), nec_rid_to_mla_idx(0, 3), nec_rid_to_mla_idx(0, 99));
	for (int port = 0; port < 3; port++)
		printf("nec_get_peer_mla_idx(0, 1, port %d) = %d\n", port, nec_get_peer_mla_idx(0, 1, port));

	int peer = -7;
	rc = nec_get_p2p_pod_peer_node(0, 1, 3, &peer);
	printf("nec_get_p2p_pod_peer_node(0, node 1, distance 3): %d, peer node %d\n", rc, peer);
	int can = -7;
	s = nec_pod_node_can_access_peer_node(NEC_POD_TYPE_P2P, 0, 0, 1, 1, &can);
	printf("nec_pod_node_can_access_peer_node(P2P, node 0 -> 1): status %d, %d\n", s, can);
	s = nec_pod_node_can_access_peer_node(NEC_POD_TYPE_NONE, 0, 0, 1, 1, &can);
	printf("nec_pod_node_can_access_peer_node(NONE, node 0 -> 1): status %d, %d\n", s, can);
	s = nec_pod_node_can_access_peer_node(NEC_POD_TYPE_INVALID, 0, 0, 1, 1, &can);
	printf("nec_pod_node_can_access_peer_node(INVALID): status %d\n", s);

	char text[] = "nrtabi: hello from the host\0ignored";
	nec_ndl_printk(text, sizeof text, 1);

	struct dyn3 d = {.magic = 0x494e5944, .rank_n = 3,
			 .send_count = {3, 5, 7}, .send_offset = {0, 3, 8}, .recv_offset = {10, 20, 30}};
	enc_host_mem_t *mem = (enc_host_mem_t *)&d;
	/* (data_type_sz 2, dst_rank 1): 5 elements of 2 bytes. Passed through
	 * unswapped it would read rank 2's count with element size 1: 7. */
	printf("nec_get_dynamic_send_size_bytes(mem, 2, 1, 3) = %zu\n", nec_get_dynamic_send_size_bytes(mem, 2, 1, 3));
	printf("nec_get_dynamic_send_size_bytes(mem, 4, 2, 99) = %zu (rank_n is not used)\n", nec_get_dynamic_send_size_bytes(mem, 4, 2, 99));
	printf("nec_get_dynamic_send_offset_bytes(mem, 4, 2, 3) = %zu\n", nec_get_dynamic_send_offset_bytes(mem, 4, 2, 3));
	printf("nec_get_dynamic_recv_offset_bytes(mem, 4, 0, 3) = %zu\n", nec_get_dynamic_recv_offset_bytes(mem, 4, 0, 3));
	printf("nec_get_dynamic_recv_offset_bytes(mem, 4, 0, 2) = %zu (rank_n disagrees with the table)\n", nec_get_dynamic_recv_offset_bytes(mem, 4, 0, 2));
	nec_set_recv_size_bytes(mem, 6, 4, 2, 3);
	printf("nec_set_recv_size_bytes(mem, 6, 4, 2, 3): recv_size = [%lu %lu %lu]\n",
	       (unsigned long)d.recv_size[0], (unsigned long)d.recv_size[1], (unsigned long)d.recv_size[2]);

	volatile uint32_t sem = 0;
	nec_inc_semaphore(&sem, 0x10001);
	printf("nec_inc_semaphore(&sem, 0x10001): sem = %#x\n", sem);

	uint32_t vnc = 0;
	s = nrt_get_total_vnc_count(&vnc);
	printf("nrt_get_total_vnc_count: status %d, %u\n", s, vnc);

	size_t sizes[] = {sizeof(nrt_instance_info_t), 8, 4, 0};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		nrt_instance_info_t info;
		fill(&info, sizeof info);
		s = nrt_get_instance_info(&info, sizes[i]);
#if NRTABI_HAS_NRT_INSTANCE_INFO_T_ARCH_NAME && NRTABI_HAS_NRT_INSTANCE_INFO_T_DEVICE_REVISION
		printf("nrt_get_instance_info(n=%zu): status %d family %#x size %#x arch[0] %#x revision[0] %#x\n", sizes[i], s,
		       info.family, info.size, (unsigned char)info.arch_name[0], (unsigned char)info.device_revision[0]);
#else
		/* A release without them (docs/generator.md#absent-fields). */
		printf("nrt_get_instance_info(n=%zu): status %d family %#x size %#x (no arch_name, no device_revision)\n", sizes[i], s,
		       info.family, info.size);
#endif
	}
	nrt_instance_info_t info;
	nrt_get_instance_info(&info, sizeof info);
#if NRTABI_HAS_NRT_INSTANCE_INFO_T_ARCH_NAME && NRTABI_HAS_NRT_INSTANCE_INFO_T_DEVICE_REVISION
	printf("instance: family %u size %u arch %.*s revision %.*s\n", info.family, info.size,
	       (int)sizeof info.arch_name, info.arch_name, (int)sizeof info.device_revision, info.device_revision);
#else
	printf("instance: family %u size %u (no arch_name, no device_revision)\n", info.family, info.size);
#endif
	printf("nrt_get_instance_info(NULL): status %d\n", nrt_get_instance_info(NULL, sizeof info));

	size_t vsizes[] = {sizeof(nrt_version_t), offsetof(nrt_version_t, git_hash), offsetof(nrt_version_t, rt_detail), 8};
	for (size_t i = 0; i < sizeof vsizes / sizeof vsizes[0]; i++) {
		nrt_version_t v;
		fill(&v, sizeof v);
		s = nrt_get_version(&v, vsizes[i]);
		printf("nrt_get_version(n=%zu): status %d major %#lx patch %#lx detail[0] %#x git[0] %#x\n", vsizes[i], s,
		       (unsigned long)v.rt_major, (unsigned long)v.rt_patch, (unsigned char)v.rt_detail[0], (unsigned char)v.git_hash[0]);
	}
	nrt_version_t v;
	nrt_get_version(&v, sizeof v);
	printf("version: %lu.%lu.%lu.%lu \"%.*s\" git %.*s\n", (unsigned long)v.rt_major, (unsigned long)v.rt_minor,
	       (unsigned long)v.rt_patch, (unsigned long)v.rt_maintenance, (int)sizeof v.rt_detail, v.rt_detail,
	       (int)sizeof v.git_hash, v.git_hash);

	int err = -1;
	char why[256];
	void *net = nrt_get_libnccl_net(&err, why, sizeof why);
	printf("nrt_get_libnccl_net: %s, err %d, \"%s\"\n", net ? "a handle" : "NULL", err, why);
	return 0;
}

/* Lengths no buffer has and NULL out-pointers, on both sides of the
 * boundary: each call answers (a status, or returns) and the process lives. */
static int hostile(const char *topo, const char *lib)
{
	printf("nrtabi_init: status %u\n", nrtabi_init(arg(topo), arg(lib)));

	char line[] = "nrtabi: a short line";
	nec_ndl_printk(line, 0x80000000u, 1);
	printf("nec_ndl_printk(size 0x80000000): returned\n");
	nec_ndl_printk(line, 0x7fffffffu, 1);
	printf("nec_ndl_printk(size 0x7fffffff): returned\n");
	nec_ndl_printk(line, 0xffffffffu, 1);
	printf("nec_ndl_printk(size 0xffffffff): returned\n");

	char msg[8];
	printf("nrtabi_ccom_state(msg, SIZE_MAX): %d\n", nrtabi_ccom_state(NULL, NULL, msg, SIZE_MAX));
	printf("nrtabi_ccom_call(0, out, SIZE_MAX): %u\n", nrtabi_ccom_call(0, msg, SIZE_MAX));
	printf("nrtabi_ccom_call(0, out, (size_t)-8): %u\n", nrtabi_ccom_call(0, msg, (size_t)-8));
	uint32_t rc = nrtabi_ccom_call(0, msg, sizeof msg);
	printf("nrtabi_ccom_call(0, out, 8): %u \"%s\"\n", rc, msg);
	printf("nec_get_device_count(NULL, 0xffffffff): %d\n", nec_get_device_count(NULL, 0xffffffffu));
	int ports[4], hosts[4];
	printf("nec_build_port_and_rid_map(0, count INT_MAX): %d\n", nec_build_port_and_rid_map(0, ports, hosts, 0x7fffffff));
	printf("nec_build_port_and_rid_map(0, count -1): %d\n", nec_build_port_and_rid_map(0, ports, hosts, -1));

	/* The libnccom double itself, as any caller could reach it. */
	void *h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
	if (h == NULL) {
		printf("the double is not loaded: %s\n", dlerror());
		return 1;
	}
	neuronGetVersionInfo_fn version = (neuronGetVersionInfo_fn)dlsym(h, "neuronGetVersionInfo");
	neuronGetUniqueId_fn uid = (neuronGetUniqueId_fn)dlsym(h, "neuronGetUniqueId");
	neuronInitComm_fn init = (neuronInitComm_fn)dlsym(h, "neuronInitComm");
	neuronGetCommInfo_fn info = (neuronGetCommInfo_fn)dlsym(h, "neuronGetCommInfo");
	neuronNetTest_fn test = (neuronNetTest_fn)dlsym(h, "neuronNetTest");
	neuronBootstrapSend_fn send = (neuronBootstrapSend_fn)dlsym(h, "neuronBootstrapSend");
	neuronBootstrapRecv_fn recv = (neuronBootstrapRecv_fn)dlsym(h, "neuronBootstrapRecv");
	neuronBootstrapAllGather_fn gather = (neuronBootstrapAllGather_fn)dlsym(h, "neuronBootstrapAllGather");
	if (!version || !uid || !init || !info || !test || !send || !recv || !gather) {
		printf("a neuron* symbol is missing from the double\n");
		return 1;
	}
	version(NULL, 56);
	printf("neuronGetVersionInfo(NULL, 56): returned\n");
	char id[128] = {0}, buf[4] = {0};
	void *comm = NULL;
	printf("neuronGetUniqueId(NULL): %d\n", uid(NULL, 2, "hostile"));
	printf("neuronInitComm(comm NULL): %d\n", init(NULL, 1, id, 0, NULL, false));
	printf("neuronInitComm(id NULL): %d\n", init(&comm, 1, NULL, 0, NULL, false));
	printf("neuronInitComm(rank 5 of 2): %d\n", init(&comm, 2, id, 5, NULL, false));
	printf("neuronGetCommInfo(out NULL): %d\n", info(NULL, NULL));
	printf("neuronNetTest(NULL outs): %d\n", test(NULL, NULL, NULL));
	printf("neuronBootstrapSend(peer 7 of 1): %d\n", send(NULL, 7, buf, sizeof buf, "hostile"));
	printf("neuronBootstrapSend(data NULL, size 4): %d\n", send(NULL, 0, NULL, 4, "hostile"));
	printf("neuronBootstrapRecv(size SIZE_MAX): %d\n", recv(NULL, 0, buf, SIZE_MAX, "hostile"));
	printf("neuronBootstrapAllGather(size SIZE_MAX / 2): %d\n", gather(NULL, buf, SIZE_MAX / 2, "hostile"));
	dlclose(h);
	return 0;
}

/* The proxy-<tid> loop over libnccom for at most ms milliseconds. */
static int proxy(const char *topo, const char *lib, const char *ms)
{
	printf("nrtabi_init: status %u\n", nrtabi_init(arg(topo), arg(lib)));
	char line[256];
	uint32_t s = nrtabi_proxy_run((uint32_t)strtoul(ms, NULL, 10), line, sizeof line);
	printf("nrtabi_proxy_run: status %u: %s\n", s, line);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 4 && strcmp(argv[1], "run") == 0)
		return run(argv[2], argv[3]);
	if (argc == 5 && strcmp(argv[1], "concurrent") == 0)
		return concurrent(atoi(argv[2]), argv[3], argv[4]);
	if (argc == 4 && strcmp(argv[1], "reverse") == 0)
		return reverse(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "hostile") == 0)
		return hostile(argv[2], argv[3]);
	if (argc == 5 && strcmp(argv[1], "proxy") == 0)
		return proxy(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: host run|reverse|hostile TOPOLOGY LIBNCCOM | host concurrent N TOPOLOGY LIBNCCOM | host proxy TOPOLOGY LIBNCCOM MS\n");
	return 2;
}
