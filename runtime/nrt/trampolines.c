/*
 * The trampolines as a table, for a host that drives libnccom the way
 * libnrt's own layers do (docs/runtime-boundary.md#the-trampoline-table): the
 * struct is the slot table's, each member the nccl* trampoline of that slot
 * instead of the libnccom function, so every call a host makes through it
 * takes the guard, the NULL-out check and the failure log of the shipped
 * wrappers. The assignments are type-checked against the generated
 * trampolines: a signature that drifts from the spec does not compile.
 */
#include "nrt_slots.h"
#include "trampolines.h"

void nrt_trampoline_table(struct nrt_nccl_slots *t)
{
	/* The probe's trampoline reports a status the raw entry point does not
	 * return; the handoff ran it already (nrtabi_init's outcome). */
	t->neuronGetVersionInfo = NULL;
	t->neuronGetUniqueId = ncclGetUniqueId;
	t->neuronInitGlobalComm = ncclInitGlobalComm;
	t->neuronInitComm = ncclInitComm;
	t->neuronBuildGraphComm = ncclBuildGraphComm;
	t->neuronGetCommInfo = ncclGetCommInfo;
	t->neuronFreeComm = ncclFreeComm;
	t->neuronExpandConnectivity = ncclExpandConnectivity;
	t->neuronStartNetworkProxy = ncclStartNetworkProxy;
	t->neuronStopNetworkProxy = ncclStopNetworkProxy;
	t->neuronNetworkProxyProgress = ncclNetworkProxyProgress;
	t->neuronBootstrapSend = ncclBootstrapSend;
	t->neuronBootstrapRecv = ncclBootstrapRecv;
	t->neuronBootstrapAllGather = ncclBootstrapAllGather;
	t->neuronPreferredNcRidNic = ncclPreferredNcRidNic;
	t->neuronPreferredNcRidNicBdf = ncclPreferredNcRidNicBdf;
	t->neuronNetRegMr = ncclNetRegMr;
	t->neuronNetDeregMr = ncclNetDeregMr;
	t->neuronGetPeerDeviceId = ncclGetPeerDeviceId;
	t->neuronSetAffinity = ncclSetAffinity;
	t->neuronGetNetConnector = ncclGetNetConnector;
	t->neuronInitNet = ncclInitNet;
	t->neuronFiniPlugin = ncclFiniPlugin;
	t->neuronGetOFIHandle = ncclGetOFIHandle;
	t->neuronNetListen = ncclNetListen;
	t->neuronNetConnect = ncclNetConnect;
	t->neuronNetAccept = ncclNetAccept;
	t->neuronNetRegMrOG = ncclNetRegMrOG;
	t->neuronNetDeregMrOG = ncclNetDeregMrOG;
	t->neuronNetGetMrKey = ncclNetGetMrKey;
	t->neuronNetIsend = ncclNetIsend;
	t->neuronNetIrecv = ncclNetIrecv;
	t->neuronNetIflush = ncclNetIflush;
	t->neuronNetTest = ncclNetTest;
	t->neuronNetCloseSend = ncclNetCloseSend;
	t->neuronNetCloseRecv = ncclNetCloseRecv;
	t->neuronNetCloseListen = ncclNetCloseListen;
}
