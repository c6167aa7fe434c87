// Package nrt is libnrt's side of the boundary with libnccom, in Go over
// cgo; runtime/libnrt links it into libnrt.so.1.
//
// Forward: Init performs the process's one handoff (handoff.c): it dlopens
// libnccom (Options.Library, by default the spec's "libnccom.so"), checks
// its version probe and compatibility id, fills the generated slot table
// with every neuron* entry point, and then loads the net plugin softly. A
// failed handoff arms the sentinel, so every guarded call answers
// NRT_FAILURE and logs instead of jumping through an empty slot. The typed
// API (forward_*.go) is one Go function per forward entry point, each
// calling the generated nccl* trampoline, guard included, and returning a
// *CallError that carries the NRT_STATUS.
//
// Reverse: the callbacks libnccom calls back into (nec_*, nrt_*), which
// libnrt.so.1 exports at the spec's version node through the C shims of
// reverse.c, answer from the device layer
// (runtime/device; SetDevice replaces it) and the dynamic-input tables
// (runtime/dyninput). None of them may reach a forward entry point;
// internal/seamcheck proves that statically.
//
// Proxy: ProxyDriver (RunProxy, StartProxy) is the proxy-<tid> loop that
// ticks the hot, unguarded ncclNetworkProxyProgress once per iteration on a
// thread of its own and reads the semaphore word nec_inc_semaphore stores
// into (proxy_driver.c; docs/runtime-boundary.md#behaviour-worth-knowing).
//
// Adapters: Bootstrap and Comms give runtime/collectives' per-NC bootstrap
// the loaded libnccom's bootstrap socket and comm entry points, and
// BootstrapIdentity answers what a Go bootstrap (runtime/transport/tcp) asks
// of libnrt.
//
// The release the package is built for is generated/abi's, chosen by the
// nrtabi_release_<release> build tag (release.go).
//
// The two legs of the boundary it implements:
// docs/runtime-boundary.md#the-two-legs.
package nrt
