/*
 * Bad arguments on every neuron* export of the reference libnccom: NULL
 * out-pointers, out-of-range sizes and ranks, a comm it never made. Each
 * call must return (never crash) and print "<name> <status>"; the test
 * holds the init path's statuses to ncclInvalidArgument (passed through as
 * the NRT_STATUS, contradiction row init-status-invalid-argument), the
 * others' to NRT_INVALID, and the entry points the reference does not
 * provide to a non-success status. "version <n>" is ncclGetVersion's answer.
 */
#include <stdio.h>
#include <string.h>

#include "nrtabi.h"
#include "nrtabi_runtime.h"

/* Upstream's public call, exported beside the 37 slots (libnccom.map). */
ncclResult_t ncclGetVersion(int *version);

#define SHOW(name, call) printf("%s %d\n", name, (int)(call))

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	uint32_t st = nrtabi_init(NULL, NULL);
	if (st != NRT_SUCCESS) {
		fprintf(stderr, "nrtabi_init: %u\n", st);
		return 1;
	}
	enc_neuron_device_info_t dev;
	memset(&dev, 0, sizeof dev);
	char id[128] = {0}, bdf[16];
	void *comm = NULL;
	int fake = 0, out = 0;
	neuronGetVersionInfo(NULL, 56);
	nec_version_info_t vi;
	memset(&vi, 0xaa, sizeof vi);
	neuronGetVersionInfo(&vi, 8); /* too small for the version words: nothing written */
	printf("neuronGetVersionInfo(n=8) wrote %s\n", vi.major == 0xaaaaaaaaaaaaaaaaULL ? "nothing" : "something");
	int version = 0;
	ncclResult_t vr = ncclGetVersion(&version);
	printf("version %d %d\n", version, (int)vr);
	SHOW("ncclGetVersion(NULL)", ncclGetVersion(NULL));
	SHOW("neuronGetUniqueId(NULL)", neuronGetUniqueId(NULL, 2, "t"));
	SHOW("neuronGetUniqueId(rank_n=0)", neuronGetUniqueId(id, 0, "t"));
	SHOW("neuronGetUniqueId(rank_n=-1)", neuronGetUniqueId(id, -1, "t"));
	SHOW("neuronInitGlobalComm(dev=NULL)", neuronInitGlobalComm(0, 2, NULL, "127.0.0.1:1", &comm, "t"));
	SHOW("neuronInitGlobalComm(comm=NULL)", neuronInitGlobalComm(0, 2, &dev, "127.0.0.1:1", NULL, "t"));
	SHOW("neuronInitGlobalComm(rank=5/2)", neuronInitGlobalComm(5, 2, &dev, "127.0.0.1:1", &comm, "t"));
	SHOW("neuronInitGlobalComm(count=1e9)", neuronInitGlobalComm(0, 1000000000, &dev, "127.0.0.1:1", &comm, "t"));
	SHOW("neuronInitGlobalComm(bad root id)", neuronInitGlobalComm(0, 2, &dev, "no-port", &comm, "t"));
	SHOW("neuronInitComm(comm=NULL)", neuronInitComm(NULL, 2, id, 0, &dev, false));
	SHOW("neuronInitComm(id=NULL)", neuronInitComm(&comm, 2, NULL, 0, &dev, false));
	SHOW("neuronInitComm(dev=NULL)", neuronInitComm(&comm, 2, id, 0, NULL, false));
	SHOW("neuronInitComm(rank=-1)", neuronInitComm(&comm, 2, id, -1, &dev, false));
	/* A split unique id (docs/bootstrap.md#group-comm-split) of a world of 2
	 * this process does not hold, then one of a version no maker writes. */
	char split[128] = "nrtsplit";
	split[8] = 1;
	split[12] = 2;
	split[16] = 0x5a;
	split[32] = 2;
	split[40] = 1;
	SHOW("neuronInitComm(split id, no world)", neuronInitComm(&comm, 2, split, 0, &dev, false));
	split[8] = 2;
	SHOW("neuronInitComm(split id, version 2)", neuronInitComm(&comm, 2, split, 0, &dev, false));
	SHOW("neuronBuildGraphComm(unknown)", neuronBuildGraphComm(&fake));
	SHOW("neuronGetCommInfo(NULL out)", neuronGetCommInfo(&fake, NULL));
	nccl_comm_info_t info;
	SHOW("neuronGetCommInfo(unknown comm)", neuronGetCommInfo(&fake, &info));
	SHOW("neuronFreeComm(NULL)", neuronFreeComm(NULL));
	SHOW("neuronFreeComm(unknown)", neuronFreeComm(&fake));
	SHOW("neuronBootstrapSend(unknown)", neuronBootstrapSend(&fake, 1, &out, 4, "t"));
	SHOW("neuronBootstrapRecv(NULL state)", neuronBootstrapRecv(NULL, 1, &out, 4, "t"));
	SHOW("neuronBootstrapAllGather(NULL state)", neuronBootstrapAllGather(NULL, &out, 4, "t"));
	SHOW("neuronGetPeerDeviceId(NULL out)", neuronGetPeerDeviceId(&fake, 0, NULL));
	SHOW("neuronGetPeerDeviceId(unknown)", neuronGetPeerDeviceId(&fake, 0, &out));
	SHOW("neuronNetworkProxyProgress(NULL)", neuronNetworkProxyProgress(NULL, 0, 0, NULL, NULL));
	SHOW("neuronNetRegMr(NULL)", neuronNetRegMr(NULL, 0, 0, false, 0, NULL, 0, 0, NULL));
	SHOW("neuronSetAffinity(NULL)", neuronSetAffinity(NULL, NULL, NULL, 0));
	SHOW("neuronGetNetConnector(NULL)", neuronGetNetConnector(NULL, 0, 0, false, NULL));
	SHOW("neuronPreferredNcRidNic(NULL)", neuronPreferredNcRidNic(0, 0, NULL));
	SHOW("neuronPreferredNcRidNicBdf(NULL)", neuronPreferredNcRidNicBdf(0, 0, NULL, 16));
	SHOW("neuronPreferredNcRidNicBdf(len=0)", neuronPreferredNcRidNicBdf(0, 0, bdf, 0));
	SHOW("neuronGetOFIHandle(NULL)", neuronGetOFIHandle(NULL));
	SHOW("neuronNetListen(NULL)", neuronNetListen(0, NULL, NULL));
	SHOW("neuronNetConnect(NULL)", neuronNetConnect(0, NULL, NULL));
	SHOW("neuronNetAccept(NULL)", neuronNetAccept(NULL, NULL));
	SHOW("neuronNetRegMrOG(NULL)", neuronNetRegMrOG(NULL, NULL, 0, 0, NULL));
	SHOW("neuronNetGetMrKey(NULL)", neuronNetGetMrKey(NULL, NULL));
	SHOW("neuronNetIsend(NULL)", neuronNetIsend(NULL, NULL, 0, NULL, NULL));
	SHOW("neuronNetIrecv(NULL)", neuronNetIrecv(NULL, NULL, 0, NULL, NULL));
	SHOW("neuronNetIflush(NULL)", neuronNetIflush(NULL, NULL, 0, NULL, NULL));
	SHOW("neuronNetTest(NULL)", neuronNetTest(NULL, NULL, NULL));
	/* Not provided: refused by name, with valid arguments. */
	void *h = NULL;
	int done = 0, size = 0;
	SHOW("unprovided neuronExpandConnectivity", neuronExpandConnectivity(&fake, ENC_CONNECTIVITY_DEFAULT));
	SHOW("unprovided neuronStartNetworkProxy", neuronStartNetworkProxy(&fake, 0, 0, NULL, 0, NULL, 0, NULL, 0));
	SHOW("unprovided neuronStopNetworkProxy", neuronStopNetworkProxy(&fake, 0));
	SHOW("unprovided neuronNetDeregMr", neuronNetDeregMr(&fake, 0, 0, false, 0, NULL));
	SHOW("unprovided neuronInitNet", neuronInitNet(NULL));
	SHOW("unprovided neuronFiniPlugin", neuronFiniPlugin());
	SHOW("unprovided neuronGetOFIHandle", neuronGetOFIHandle(&h));
	SHOW("unprovided neuronNetTest", neuronNetTest(&fake, &done, &size));
	SHOW("unprovided neuronNetDeregMrOG", neuronNetDeregMrOG(&fake, NULL));
	SHOW("unprovided neuronNetCloseSend", neuronNetCloseSend(&fake));
	SHOW("unprovided neuronNetCloseRecv", neuronNetCloseRecv(&fake));
	SHOW("unprovided neuronNetCloseListen", neuronNetCloseListen(&fake));
	return 0;
}
