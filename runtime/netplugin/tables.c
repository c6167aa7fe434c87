/* The exported tables, in the spec's layouts (generated nrtabi.h), each
 * left out or thinned by a fault define (netplugin.h). */
#include "netplugin.h"

#ifdef NETPLUGIN_NULL_MEMBER
#define MEMBER(m, f) (0 ? (void *)(f) : (__builtin_strcmp(#m, NP_STR(NETPLUGIN_NULL_MEMBER)) == 0 ? (void *)0 : (void *)(f)))
#else
#define MEMBER(m, f) ((void *)(f))
#endif
#define NP_STR2(x) #x
#define NP_STR(x) NP_STR2(x)

__attribute__((unused)) static ncclResult_t np_isend_tag(void *c, void *data, int size, int tag, void *mh, void **req)
{
	(void)tag; /* one stream per comm: tags are not matched */
	return np_isend(c, data, size, mh, req);
}

__attribute__((unused)) static ncclResult_t np_irecv_n(void *c, int n, void **data, int *sizes, int *tags, void **mhs, void **req)
{
	(void)tags;
	if (n != 1 || data == NULL || sizes == NULL || mhs == NULL)
		return ncclInvalidArgument; /* maxRecvs is 1 */
	return np_irecv(c, data[0], sizes[0], mhs[0], req);
}

__attribute__((unused)) static ncclResult_t np_iflush_n(void *c, int n, void **data, int *sizes, void **mhs, void **req)
{
	if (n != 1 || data == NULL || sizes == NULL || mhs == NULL)
		return ncclInvalidArgument;
	return np_iflush(c, data[0], sizes[0], mhs[0], req);
}

#define COMMON                                                                                                \
	.listen = MEMBER(listen, np_listen), .connect = MEMBER(connect, np_connect), .accept = MEMBER(accept, np_accept), \
	.regMr = MEMBER(regMr, np_reg_mr), .deregMr = MEMBER(deregMr, np_dereg_mr), .test = MEMBER(test, np_test),       \
	.closeSend = MEMBER(closeSend, np_close_send), .closeRecv = MEMBER(closeRecv, np_close_recv),                      \
	.closeListen = MEMBER(closeListen, np_close_listen)

/* V5_V6_REST: the members v5 and v6 share after devices (v6 only adds fini). */
#define V5_V6_REST                                                                                           \
	.getProperties = MEMBER(getProperties, np_properties), COMMON, .isend = MEMBER(isend, np_isend_tag), \
	.irecv = MEMBER(irecv, np_irecv_n), .iflush = MEMBER(iflush, np_iflush_n), .getMrKey = MEMBER(getMrKey, np_get_mr_key)

#define NAME "nrtabi-double"

#ifndef NETPLUGIN_NO_V6
__attribute__((visibility("default"))) ncclNet_v6_t ncclNetPlugin_v6 = {
	.name = NAME, .init = MEMBER(init, np_init), .fini = MEMBER(fini, np_fini), .devices = MEMBER(devices, np_devices),
	V5_V6_REST,
};
#endif

#ifndef NETPLUGIN_NO_V5
__attribute__((visibility("default"))) ncclNet_v5_t ncclNetPlugin_v5 = {
	.name = NAME, .init = MEMBER(init, np_init), .devices = MEMBER(devices, np_devices),
	V5_V6_REST,
};
#endif

#ifndef NETPLUGIN_NO_V4
__attribute__((visibility("default"))) ncclNet_v4_t ncclNetPlugin_v4 = {
	.name = NAME, .init = MEMBER(init, np_init), .devices = MEMBER(devices, np_devices),
	.getProperties = MEMBER(getProperties, np_properties_v4), COMMON,
	.isend = MEMBER(isend, np_isend), .irecv = MEMBER(irecv, np_irecv), .iflush = MEMBER(iflush, np_iflush),
};
#endif
