// Package nettest tests the net-plugin double of runtime/netplugin (a small
// C libnccom-net.so over TCP sockets exporting the ncclNetPlugin_v6, _v5
// and _v4 tables in the spec's layouts, spec/2.31.24/net_plugin.toml, and
// the fault variants of runtime/builder.NetDoubles) together with the
// reference libnccom: the tests build both, a C libnrt double and a C host
// with the real gcc, and move bytes between processes on loopback through
// the 26 net and proxy entry points (docs/net-seam.md#the-double). It has
// no Go API.
package nettest
