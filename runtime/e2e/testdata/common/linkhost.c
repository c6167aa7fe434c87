/*
 * The link-matrix host: no link-time dependency on libnrt. It dlopens a
 * libnrt.so.1 variant, then lets it (or itself) dlopen a libnccom double, and
 * reports what the dynamic linker did.
 *
 *   linkhost LIBNRT LIBNCCOM INDEX
 *
 * When the libnrt has nrtabi_init, the runtime does the libnccom load
 * (ncclInit) and, if it succeeds, calls forward entry point INDEX, which in
 * the doubles calls back into libnrt; otherwise the host dlopens LIBNCCOM
 * itself.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef uint32_t (*init_fn)(const char *, const char *);
typedef int (*state_fn)(int *, int *, char *, size_t);
typedef uint32_t (*call_fn)(int, char *, size_t);

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc != 4) {
		fprintf(stderr, "usage: linkhost LIBNRT LIBNCCOM INDEX\n");
		return 2;
	}
	void *nrt = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	if (nrt == NULL) {
		printf("libnrt: %s\n", dlerror());
		return 1;
	}
	printf("libnrt: loaded\n");
	init_fn init = (init_fn)dlsym(nrt, "nrtabi_init");
	if (init == NULL) {
		void *h = dlopen(argv[2], RTLD_NOW);
		printf("libnccom (dlopen by the host): %s\n", h ? "loaded" : dlerror());
		return h ? 0 : 1;
	}
	state_fn state = (state_fn)dlsym(nrt, "nrtabi_ccom_state");
	call_fn call = (call_fn)dlsym(nrt, "nrtabi_ccom_call");
	uint32_t st = init(NULL, argv[2]);
	char msg[1200];
	int armed = 0;
	int valid = state(NULL, &armed, msg, sizeof msg);
	printf("nrtabi_init: status %u, %d slots valid%s%s\n", st, valid, armed ? ", sentinel: " : "", armed ? msg : "");
	if (st == 0) {
		/* neuronGetPeerDeviceId: forward into libnccom, which calls
		 * nec_get_peer_mla_idx back in libnrt. */
		call(atoi(argv[3]), msg, sizeof msg);
		printf("round trip: %s\n", msg);
	}
	return st == 0 ? 0 : 1;
}
