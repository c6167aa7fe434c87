// Package compat predicts, from the binaries alone, whether a libnrt.so.1, a
// libnccom.so.2 and (optionally) a net plugin load together: the verdict the
// dynamic linker and the forward handoff would reach, read without running
// either. It reads what the loader reads (dynamic symbols, version
// definitions and needs), the compatibility id the version probe writes
// (decoded from the probe's code, never executed), the plugin tables, and
// the DWARF layouts of the structs both sides share.
//
// The stages are the handoff's, in its order (docs/nrtabi-compat.md#rules):
// dlopen with its reverse version needs, the version probe, the compat
// gate, the all-or-nothing dlsym, the soft net-plugin load, and the silent
// one, struct layouts. A fact it could not see makes the verdict unknown,
// never compatible.
package compat
