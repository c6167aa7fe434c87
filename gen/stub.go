package gen

import (
	"fmt"
	"strconv"
	"strings"

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
	Compat                               int64
	Version                              [4]uint64
	GitHashAfter, CompatAfter            int64
	Funcs                                []stubFunc
	Imports                              []string
}

// stubBodies are the behaviours that let a test see both legs in one call.
// Every other entry point returns NCCOM_STUB_RC.
var stubBodies = map[string]string{
	"neuronGetUniqueId": `	memset(id, 0, 128);
	snprintf(id, 128, "nccom-stub uid rank_n=%d hint=%s #%u", rank_n, hint ? hint : "",
	         __atomic_add_fetch(&nccom_stub_uids, 1, __ATOMIC_RELAXED)); /* distinct per call, like a real id */
	return NCCOM_STUB_RC;`,
	"neuronInitGlobalComm": `	uint32_t vnc = 0;
	(void)g_dev_id; (void)g_dev_count; (void)dev; (void)root_id; (void)hint;
	if (NCCOM_STUB_REVERSE(nrt_get_total_vnc_count(&vnc), NRT_SUCCESS) != NRT_SUCCESS) /* reverse leg */
		return NRT_FAILURE;
	*comm = nccom_stub_new_comm();
	return NCCOM_STUB_RC;`,
	"neuronInitComm": `	uint32_t vnc = 0;
	(void)rank_n; (void)id; (void)rank; (void)dev; (void)bypass_graph;
	if (NCCOM_STUB_REVERSE(nrt_get_total_vnc_count(&vnc), NRT_SUCCESS) != NRT_SUCCESS) /* reverse leg */
		return NRT_FAILURE;
	*comm = nccom_stub_new_comm();
	return NCCOM_STUB_RC;`,
	"neuronGetPeerDeviceId": `	(void)comm;
	*out = NCCOM_STUB_REVERSE(nec_get_peer_mla_idx(0, peer, 0), peer); /* forward -> reverse (re-entrant) round trip */
	return NCCOM_STUB_RC;`,
	"neuronNetworkProxyProgress": `	(void)comm; (void)stream_id; (void)proxy_id;
	*progressed = true;
	*failed = false;
	return NCCOM_STUB_RC;`,
}

func cStub(s *spec.Spec) ([]File, error) {
	ver := s.Constant("NCCOM_VERSION_STRING")
	compat := s.Constant("NCCOM_COMPAT_ID")
	gitAfter, compatAfter := s.Constant("VERSION_INFO_GIT_HASH_AFTER"), s.Constant("VERSION_INFO_COMPAT_AFTER")
	d := stubData{Banner: cBanner(s), Release: s.Release.Name, Header: HeaderName,
		SONAME: s.Release.LibNCCOM.SONAME, Git: s.Release.LibNCCOM.Git}
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
			return nil, fmt.Errorf("NCCOM_VERSION_STRING %q: %v", vs, err)
		}
		d.Version[i] = v
	}
	for _, f := range s.ByIndex() {
		sf := stubFunc{Name: f.Name, Ret: cRet(f.Signature), Params: cParams(f.Params), Void: f.Ret.Kind == spec.KindVoid}
		if body, ok := stubBodies[f.Name]; ok {
			sf.Body = body
		} else if f.Guard != spec.Probe {
			var b strings.Builder
			for _, p := range f.Params {
				fmt.Fprintf(&b, "\t(void)%s;\n", p.Name)
			}
			b.WriteString("\treturn NCCOM_STUB_RC;")
			sf.Body = b.String()
		}
		d.Funcs = append(d.Funcs, sf)
	}
	for _, r := range s.Reverse {
		d.Imports = append(d.Imports, r.Name)
	}
	data, err := execTemplate("nccom_stub.c.tmpl", d)
	if err != nil {
		return nil, err
	}
	return []File{{Path: "c/" + StubSource, Data: data}}, nil
}
