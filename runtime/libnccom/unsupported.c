/*
 * The entry points docs/sources.md#s001 does not describe: the net plugin (neuronNet*,
 * OFI), the proxy, connectivity, affinity, NIC preference and memory
 * registration. Each refuses with one line naming itself; none pretends to
 * have done its job. A NULL out-pointer is NRT_INVALID, as everywhere.
 */
#include "nccom.h"

static NRT_STATUS not_provided(const char *name)
{
	nccom_warn("%s: not provided by the reference libnccom (only the comm init and bootstrap of docs/sources.md#s001 are)", name);
	return NRT_FAILURE;
}

#define NEED(p)                          \
	do {                             \
		if ((p) == NULL)         \
			return NRT_INVALID; \
	} while (0)

NRT_STATUS neuronExpandConnectivity(void *comm, enc_net_connectivity_t connectivity)
{
	(void)comm;
	(void)connectivity;
	return not_provided(__func__);
}

NRT_STATUS neuronStartNetworkProxy(void *comm, uint32_t stream_id, uint32_t proxy_id, net_ops_info_t *ops, int n_ops,
				   net_src_addr_t *src, int n_src, net_dest_addr_t *dst, int n_dst)
{
	(void)comm, (void)stream_id, (void)proxy_id, (void)ops, (void)n_ops, (void)src, (void)n_src, (void)dst, (void)n_dst;
	return not_provided(__func__);
}

NRT_STATUS neuronStopNetworkProxy(void *comm, uint32_t stream_id)
{
	(void)comm, (void)stream_id;
	return not_provided(__func__);
}

NRT_STATUS neuronNetworkProxyProgress(void *comm, uint32_t stream_id, uint32_t proxy_id, bool *progressed, bool *failed)
{
	(void)comm, (void)stream_id, (void)proxy_id;
	NEED(progressed);
	NEED(failed);
	return not_provided(__func__);
}

NRT_STATUS neuronNetRegMr(void *comm, enc_pattern_t pattern, int peer, bool is_send, ofi_comm_type_t comm_type, void *data,
			  size_t size, int ptr_type, void **mhandle)
{
	(void)comm, (void)pattern, (void)peer, (void)is_send, (void)comm_type, (void)data, (void)size, (void)ptr_type;
	NEED(mhandle);
	return not_provided(__func__);
}

NRT_STATUS neuronNetDeregMr(void *comm, enc_pattern_t pattern, int peer, bool is_send, ofi_comm_type_t comm_type, void *mhandle)
{
	(void)comm, (void)pattern, (void)peer, (void)is_send, (void)comm_type, (void)mhandle;
	return not_provided(__func__);
}

NRT_STATUS neuronSetAffinity(void *comm, cpu_set_t *override, cpu_set_t *save, int core)
{
	(void)comm, (void)override, (void)core;
	NEED(save);
	return not_provided(__func__);
}

NRT_STATUS neuronGetNetConnector(void *comm, enc_pattern_t pattern, int peer, bool is_send, void **connector)
{
	(void)comm, (void)pattern, (void)peer, (void)is_send;
	NEED(connector);
	return not_provided(__func__);
}

NRT_STATUS neuronPreferredNcRidNic(uint32_t nc, uint32_t rid, int *out)
{
	(void)nc, (void)rid;
	NEED(out);
	return not_provided(__func__);
}

NRT_STATUS neuronPreferredNcRidNicBdf(uint32_t nc, uint32_t rid, char *bdf, size_t bdf_len)
{
	(void)nc, (void)rid;
	NEED(bdf);
	if (bdf_len == 0)
		return NRT_INVALID;
	return not_provided(__func__);
}

NRT_STATUS neuronInitNet(char *root_comm_id)
{
	(void)root_comm_id;
	return not_provided(__func__);
}

NRT_STATUS neuronFiniPlugin(void) { return not_provided(__func__); }

NRT_STATUS neuronGetOFIHandle(void **out)
{
	NEED(out);
	return not_provided(__func__);
}

NRT_STATUS neuronNetListen(int dev, void *handle, void **listen_comm)
{
	(void)dev, (void)handle;
	NEED(listen_comm);
	return not_provided(__func__);
}

NRT_STATUS neuronNetConnect(int dev, void *handle, void **send_comm)
{
	(void)dev, (void)handle;
	NEED(send_comm);
	return not_provided(__func__);
}

NRT_STATUS neuronNetAccept(void *listen_comm, void **recv_comm)
{
	(void)listen_comm;
	NEED(recv_comm);
	return not_provided(__func__);
}

NRT_STATUS neuronNetRegMrOG(void *comm, void *data, size_t size, int type, void **mhandle)
{
	(void)comm, (void)data, (void)size, (void)type;
	NEED(mhandle);
	return not_provided(__func__);
}

NRT_STATUS neuronNetDeregMrOG(void *comm, void *mhandle)
{
	(void)comm, (void)mhandle;
	return not_provided(__func__);
}

NRT_STATUS neuronNetGetMrKey(void *mhandle, uint64_t *key)
{
	(void)mhandle;
	NEED(key);
	return not_provided(__func__);
}

NRT_STATUS neuronNetIsend(void *send_comm, void *data, int size, void *mhandle, void **request)
{
	(void)send_comm, (void)data, (void)size, (void)mhandle;
	NEED(request);
	return not_provided(__func__);
}

NRT_STATUS neuronNetIrecv(void *recv_comm, void *data, int size, void *mhandle, void **request)
{
	(void)recv_comm, (void)data, (void)size, (void)mhandle;
	NEED(request);
	return not_provided(__func__);
}

NRT_STATUS neuronNetIflush(void *recv_comm, void *data, int size, void *mhandle, void **request)
{
	(void)recv_comm, (void)data, (void)size, (void)mhandle;
	NEED(request);
	return not_provided(__func__);
}

NRT_STATUS neuronNetTest(void *request, int *done, int *size)
{
	(void)request;
	NEED(done);
	NEED(size);
	return not_provided(__func__);
}

NRT_STATUS neuronNetCloseSend(void *send_comm)
{
	(void)send_comm;
	return not_provided(__func__);
}

NRT_STATUS neuronNetCloseRecv(void *recv_comm)
{
	(void)recv_comm;
	return not_provided(__func__);
}

NRT_STATUS neuronNetCloseListen(void *listen_comm)
{
	(void)listen_comm;
	return not_provided(__func__);
}
