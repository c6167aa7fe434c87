package spec

import "strings"

// The net plugin's table objects ([release.libnccom_net] object, spec
// net_plugin.toml): the rules every reader of them shares — release new
// observing a plugin, check's plugin role, diff — so they cannot drift.

// NetTablePrefix names the table objects libnccom dlsyms from the net
// plugin (net_plugin.toml NCCL_NET_PLUGIN_V*_SYMBOL): ncclNetPlugin_vN.
const NetTablePrefix = "ncclNetPlugin_v"

// NetSlotSize is the size of one table member, a function pointer: an
// object's slot count is its st_size over this.
const NetSlotSize = 8

// NetTableType is the spec struct a table object has: ncclNetPlugin_vN is
// an ncclNet_vN_t (each table's note in net_plugin.toml).
func NetTableType(object string) string {
	return strings.Replace(object, "Plugin_v", "_v", 1) + "_t"
}
