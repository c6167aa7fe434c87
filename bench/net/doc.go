// Package net is the whole-stack net benchmark (make bench-net, not part of
// make test): bytes/s from one network namespace to another through the
// stack (a C host -> libnrt's trampolines -> the reference libnccom -> the
// plugin), through the plugin's ncclNetPlugin_v6 table called directly, and
// over plain TCP, for 4 KiB .. 64 MiB messages, interleaved and repeated,
// with the ratios; then ns per call of a trampolined entry point against
// the libnccom entry point called directly. The plugin is aws-ofi-nccl
// built from the vendor tarballs (internal/vendorbuild), or the plugin
// double when they are absent (said so). docs/benchmarks.md#net-plugin.
package net
