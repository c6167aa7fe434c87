package gen

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/nrtabi/nrtabi/spec"
)

// StubSource is the generated libnccom test double.
const StubSource = "nccom_stub.c"

type stubFunc struct {
	Name, Ret, Params, Body string
	Void                    bool
}

type stubData struct {
	Banner, Release, Header, SONAME, Git string
	GitLit                               string // Git as a C string literal; Git is for comments
	Compat                               int64
	Version                              [4]uint64
	GitHashAfter, CompatAfter            int64
	Funcs                                []stubFunc
}

// stubBodies are the behaviours that let a test see both legs in one call.
// Every other entry point returns NCCOM_STUB_RC.
var stubBodies = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"neuronGetUniqueId": `	memset(id, 0, 128);
	snprintf(id, 128, "nccom-stub uid rank_n=%d hint=%s #%u", rank_n, hint ? hint : "",
	         __atomic_add_fetch(&nccom_stub_uids, 1, __ATOMIC_RELAXED)); /* distinct per call, like a real id */
	return NCCOM_STUB_RC;`,
		"neuronInitGlobalComm": `	uint32_t vnc = 0;
	(void)dev; (void)hint;
	if (NCCOM_STUB_REVERSE(nrt_get_total_vnc_count(&vnc), NRT_SUCCESS) != NRT_SUCCESS) /* reverse leg */
		return NRT_FAILURE;
	if (NCCOM_STUB_RC != NRT_SUCCESS)
		return NCCOM_STUB_RC;
	return nccom_stub_join('g', root_id, root_id != NULL ? strlen(root_id) : 0, g_dev_count, g_dev_id, comm);`,
		"neuronInitComm": `	uint32_t vnc = 0;
	(void)dev; (void)bypass_graph;
	if (id == NULL)
		return NRT_INVALID;
	if (NCCOM_STUB_REVERSE(nrt_get_total_vnc_count(&vnc), NRT_SUCCESS) != NRT_SUCCESS) /* reverse leg */
		return NRT_FAILURE;
	if (NCCOM_STUB_RC != NRT_SUCCESS)
		return NCCOM_STUB_RC;
	return nccom_stub_join('u', id, 128, rank_n, rank, comm);`,
		"neuronFreeComm": `	if (NCCOM_STUB_RC != NRT_SUCCESS)
		return NCCOM_STUB_RC;
	return nccom_stub_leave(comm);`,
		"neuronGetCommInfo": `	if (NCCOM_STUB_RC != NRT_SUCCESS)
		return NCCOM_STUB_RC;
	struct nccom_stub_comm *c = nccom_stub_comm_of(comm);
	if (c == NULL)
		return NRT_INVALID;
	memset(out, 0, sizeof *out);
	out->cluster_id = c->world->id; /* the same on every rank of one comm, distinct between comms */
	return NRT_SUCCESS;`,
		"neuronBootstrapSend": `	(void)hint;
	if (NCCOM_STUB_RC != NRT_SUCCESS)
		return NCCOM_STUB_RC;
	struct nccom_stub_comm *c = nccom_stub_checked(state, peer, data, size);
	if (c == NULL)
		return NRT_INVALID;
	return nccom_stub_send(c, peer, 0, data, size);`,
		"neuronBootstrapRecv": `	(void)hint;
	if (NCCOM_STUB_RC != NRT_SUCCESS)
		return NCCOM_STUB_RC;
	struct nccom_stub_comm *c = nccom_stub_checked(state, peer, data, size);
	if (c == NULL)
		return NRT_INVALID;
	return nccom_stub_recv(c, peer, 0, data, size);`,
		"neuronBootstrapAllGather": `	(void)hint;
	if (NCCOM_STUB_RC != NRT_SUCCESS)
		return NCCOM_STUB_RC;
	struct nccom_stub_comm *c = nccom_stub_checked(state, 0, all_data, size);
	if (c == NULL || size > NCCOM_STUB_MAX_MSG / (size_t)c->world->nranks)
		return NRT_INVALID;
	unsigned char *all = all_data;
	for (int p = 0; p < c->world->nranks; p++) {
		NRT_STATUS st = p == c->rank ? NRT_SUCCESS : nccom_stub_send(c, p, 1, all + (size_t)c->rank * size, size);
		if (st != NRT_SUCCESS)
			return st;
	}
	for (int p = 0; p < c->world->nranks; p++) {
		NRT_STATUS st = p == c->rank ? NRT_SUCCESS : nccom_stub_recv(c, p, 1, all + (size_t)p * size, size);
		if (st != NRT_SUCCESS)
			return st;
	}
	return NRT_SUCCESS;`,
		"neuronGetPeerDeviceId": `	(void)comm;
	*out = NCCOM_STUB_REVERSE(nec_get_peer_mla_idx(0, peer, 0), peer); /* forward -> reverse (re-entrant) round trip */
	return NCCOM_STUB_RC;`,
		"neuronPreferredNcRidNicBdf": `	if (bdf_len > 0)
		snprintf(bdf, bdf_len, "nccom-stub:%02x:%02x.0", nc & 0xff, rid & 0xff);
	return NCCOM_STUB_RC;`,
		"neuronNetworkProxyProgress": `	(void)comm; (void)stream_id; (void)proxy_id;
	*progressed = true;
	*failed = false;
	return NCCOM_STUB_RC;`,
	}
})

// stubParams are the parameter names the bodies above and the probe's body
// in nccom_stub.c.tmpl are written against, and stubOutFields the members
// of *out they write: requirements refuses a spec that renames one, naming
// it, instead of emitting a double that does not compile.
var stubParams = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"neuronGetVersionInfo":       {"out", "n"},
		"neuronGetUniqueId":          {"id", "rank_n", "hint"},
		"neuronInitGlobalComm":       {"g_dev_id", "g_dev_count", "dev", "root_id", "comm", "hint"},
		"neuronInitComm":             {"comm", "rank_n", "id", "rank", "dev", "bypass_graph"},
		"neuronGetCommInfo":          {"comm", "out"},
		"neuronFreeComm":             {"comm"},
		"neuronNetworkProxyProgress": {"comm", "stream_id", "proxy_id", "progressed", "failed"},
		"neuronBootstrapSend":        {"state", "peer", "data", "size", "hint"},
		"neuronBootstrapRecv":        {"state", "peer", "data", "size", "hint"},
		"neuronBootstrapAllGather":   {"state", "all_data", "size", "hint"},
		"neuronPreferredNcRidNicBdf": {"nc", "rid", "bdf", "bdf_len"},
		"neuronGetPeerDeviceId":      {"comm", "peer", "out"},
	}
})

var stubOutFields = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"neuronGetVersionInfo": {"major", "minor", "patch", "maintenance", "git_hash", "compatibility_version"},
		"neuronGetCommInfo":    {"cluster_id"},
	}
})

// outParam is a pointer the callee writes through: the spec notes it "out"
// (or calls it out). The trampolines and the double refuse it NULL.
func outParam(p spec.Param) bool { return strings.HasPrefix(p.Note, "out") || p.Name == "out" }

// outMark is what a default body writes through out-pointer p (parameter k
// of dlsym #index): a value no other entry point or parameter writes,
// NCCOM_STUB_OUT_BASE + 10 × index + k, so a test sees the typed API hand
// back what libnccom answered and not a zero of its own. Pointers to
// structs are left alone.
func outMark(p spec.Param, index, k int) string {
	if !outParam(p) {
		return ""
	}
	v := fmt.Sprintf("NCCOM_STUB_OUT_BASE + %d", 10*index+k)
	switch p.Type {
	case "int*", "u64*", "u32*":
		return fmt.Sprintf("\t*%s = %s;\n", p.Name, v)
	case "void**":
		return fmt.Sprintf("\t*%s = (void *)(uintptr_t)(%s);\n", p.Name, v)
	}
	return ""
}

// outChecks is the NULL test of f's out-pointers, "" when it has none.
func outChecks(ps []spec.Param) string {
	var names []string
	for _, p := range ps {
		if outParam(p) {
			names = append(names, p.Name+" == NULL")
		}
	}
	return strings.Join(names, " || ")
}

func cStub(s *spec.Spec) ([]File, error) {
	ver := s.ConstantByName("NCCOM_VERSION_STRING")
	compat := s.ConstantByName("NCCOM_COMPAT_ID")
	gitAfter, compatAfter := s.ConstantByName("VERSION_INFO_GIT_HASH_AFTER"), s.ConstantByName("VERSION_INFO_COMPAT_AFTER")
	d := stubData{Banner: cBanner(s), Release: commentText(s.Release.Name), Header: HeaderName,
		SONAME: commentText(s.Release.LibNCCOM.SONAME), Git: commentText(s.Release.LibNCCOM.Git), GitLit: cString(s.Release.LibNCCOM.Git)}
	d.Compat, _ = compat.Int()
	d.GitHashAfter, _ = gitAfter.Int()
	d.CompatAfter, _ = compatAfter.Int()
	vs, _ := ver.Str()
	parts := strings.Split(vs, ".")
	if len(parts) != 4 {
		return nil, fmt.Errorf("NCCOM_VERSION_STRING %q is not major.minor.patch.maintenance", vs)
	}
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("NCCOM_VERSION_STRING %q: %w", vs, err)
		}
		d.Version[i] = v
	}
	for _, f := range s.ByIndex() {
		sf := stubFunc{Name: f.Name, Ret: cRet(f.Signature), Params: cParams(f.Params), Void: f.Ret.Kind == spec.KindVoid}
		guard := ""
		if c := outChecks(f.Params); c != "" && !sf.Void {
			guard = "\tif (" + c + ")\n\t\treturn NRT_INVALID; /* an out-pointer is NULL */\n"
		}
		if body, ok := stubBodies()[f.Name]; ok {
			sf.Body = guard + body
		} else if f.Guard != spec.Probe {
			var b strings.Builder
			b.WriteString(guard)
			for k, p := range f.Params {
				fmt.Fprintf(&b, "\t(void)%s;\n", p.Name)
				if mark := outMark(p, f.Index, k); mark != "" {
					b.WriteString(mark)
				}
			}
			b.WriteString("\treturn NCCOM_STUB_RC;")
			sf.Body = b.String()
		}
		d.Funcs = append(d.Funcs, sf)
	}
	data, err := execTemplate("nccom_stub.c.tmpl", d)
	if err != nil {
		return nil, err
	}
	return []File{{Path: "c/" + StubSource, Data: data}}, nil
}
