// Package transport is the byte transport the per-NC bootstrap runs over:
// point-to-point send/recv to a peer rank and an all-gather. Implementations:
// in-process (tests), the libnccom bootstrap trampolines
// (ncclBootstrapSend/Recv/AllGather) and native TCP.
//
// The bootstrap it carries: docs/bootstrap.md#the-per-nc-bootstrap.
package transport

// Transport moves bytes between the ranks of one bootstrap world. Ranks are
// indices 0..Size()-1 of that world. Every call blocks until it completes or
// fails; a failure names the peer.
type Transport interface {
	// Rank is this endpoint's rank; Size the number of ranks.
	Rank() int
	Size() int
	// Send delivers data to peer. Messages between one ordered pair of ranks
	// arrive in the order they were sent.
	Send(peer int, data []byte) error
	// Recv fills data with the next message from peer; the message must be
	// exactly len(data) bytes.
	Recv(peer int, data []byte) error
	// AllGather exchanges one block per rank: on entry data[Rank()*n:(Rank()+1)*n]
	// holds this rank's block (n = len(data)/Size()); on return every block is filled.
	AllGather(data []byte) error
	// Close releases the endpoint.
	Close() error
}
