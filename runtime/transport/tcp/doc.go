// Package tcp is the bootstrap transport over TCP between real processes on
// real hosts, faithful to the flat bootstrap of libnccom (docs/sources.md#s001-3):
//
//   - a unique id is 128 bytes holding the root listener's socket address in
//     the C sockaddr layout (sockaddr_in or sockaddr_in6, 28-byte union);
//   - a root comm id (NEURON_RT_ROOT_COMM_ID) parses as <ipv4>:<port>,
//     [<ipv6>]:<port> or <hostname>:<port>, or fails with libnccom's text;
//   - the listening interface honours CCOM_SOCKET_IFNAME and
//     CCOM_SOCKET_FAMILY; NEURON_CCOM_SOCK_TIMEOUT bounds every connect,
//     accept, read and write, and the context a root or a rank is started
//     with ends them all at once (the error wraps context.Cause);
//   - the root (Net.CreateRoot) takes one INFO_TO_ROOT record per rank —
//     extInfo with the "ilya" magic, and on a global init the 16-byte
//     nccl_nrt_git_hash — refuses a bad world naming the peer and rank, and
//     answers INFO_FROM_ROOT (cluster_id, epoch, the ring successor);
//   - a rank (Net.InitFlat) connects to its successor, accepts its
//     predecessor, ring-all-gathers every listen address and is then a
//     transport.Transport (Endpoint): Send/Recv to any peer, AllGather round
//     the ring;
//   - nrt_get_total_vnc_count() != 0 makes the bootstrap a no-op.
//
// Comms serves runtime/collectives' comm layer (unique ids and comm init)
// over the same machinery, so the per-NC bootstrap
// (docs/bootstrap.md#the-per-nc-bootstrap) runs unchanged across processes. The byte protocol is spec/2.31.24/bootstrap_wire.toml.
package tcp
