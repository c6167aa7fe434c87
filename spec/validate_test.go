package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/spectest"
)

// copyRelease writes the embedded release into a temporary directory named
// after it, so each test can break one fact.
func copyRelease(t *testing.T, release string) string {
	return spectest.CopyRelease(t, Embedded, release)
}

// edit replaces the first occurrence of old after the first occurrence of
// anchor in file, and returns the 1-based line where the new text starts.
func edit(t *testing.T, dir, file, anchor, old, repl string) int {
	t.Helper()
	p := filepath.Join(dir, file)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	a := strings.Index(s, anchor)
	if a < 0 {
		t.Fatalf("%s: anchor %q not found", file, anchor)
	}
	i := strings.Index(s[a:], old)
	if i < 0 {
		t.Fatalf("%s: %q not found after %q", file, old, anchor)
	}
	i += a
	s = s[:i] + repl + s[i+len(old):]
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return strings.Count(s[:i], "\n") + 1
}

func TestEmbeddedReleaseIsValid(t *testing.T) {
	for _, r := range Releases() {
		s, err := Load(r)
		if err != nil {
			t.Fatalf("release %s: %v", r, err)
		}
		if r == Default {
			if len(s.Forward) != 37 || len(s.Reverse) != 20 {
				t.Errorf("2.31.24: %d forward, %d reverse; the facts sheet has 37 and 20", len(s.Forward), len(s.Reverse))
			}
			if s.SlotTable.Base != 0xc967b8 || s.SlotTable.Top != 0xc968d8 {
				t.Errorf("slot table %#x..%#x", s.SlotTable.Base, s.SlotTable.Top)
			}
			for name, size := range map[string]int{"enc_glb_comm": 564408, "enc_nccl_comm_node": 88, "nec_version_info_t": 56, "nrt_version_t": 224} {
				if st := s.StructByName(name); st == nil || st.Size != size {
					t.Errorf("struct %s: want %d bytes, got %+v", name, size, st)
				}
			}
		}
	}
}

// TestRules holds one broken spec per rule and asserts the rule, the message
// and the position of the error.
func TestRules(t *testing.T) {
	type change struct{ file, anchor, old, repl string }
	cases := []struct {
		rule    string
		changes []change
		msg     string
		// where the error points: the file and the line of the first change,
		// unless atFile/atAnchor name another place.
		atFile, atAnchor string
	}{
		{rule: "syntax", changes: []change{{"release.toml", "[counts]", "forward = 37", "forward = = 37"}}, msg: "expected value"},
		{rule: "decode", changes: []change{{"forward.toml", `name = "neuronGetUniqueId"`, `nccom_addr = 0x46660`, `nccom_addr = "0x46660"`}}, msg: "nccom_addr"},
		{rule: "unknown-key", changes: []change{{"forward.toml", `name = "neuronGetUniqueId"`, "slot = ", "slto = "}}, msg: `unknown key "slto"; [forward] accepts: `},
		{rule: "required", changes: []change{{"structs_nrt.toml", `name = "nec_version_info_t"`, "size = 56\n", ""}}, msg: "struct nec_version_info_t needs its total size", atFile: "structs_nrt.toml", atAnchor: "[[struct]]\nname = \"nec_version_info_t\""},
		{rule: "single-table", changes: []change{{"constants.toml", "# ---- the forward handshake", "# ---- the forward handshake", "[counts]\nforward = 37\nreverse_nec = 16\nreverse_nrt = 4\nconf = \"HIGH\"\nsource = \"dup\"\n# ---- the forward handshake"}}, msg: "[counts] is already defined at ", atFile: "release.toml", atAnchor: "[counts]"},
		{rule: "conf", changes: []change{{"reverse.toml", `name = "nec_ndl_printk"`, `conf = "HIGH"`, `conf = "SURE"`}}, msg: `nec_ndl_printk: conf = "SURE"`},
		{rule: "count", changes: []change{{"release.toml", "[counts]", "forward = 37", "forward = 36"}}, msg: "[counts] forward = 36 but 37 [[forward]] rows"},
		{rule: "unique", changes: []change{{"reverse.toml", "[[reverse]]\nname = \"nec_get_device_count\"", `"nec_get_device_count"`, `"nec_inc_semaphore"`}}, msg: `reverse symbol "nec_inc_semaphore" is declared twice`},
		{rule: "unique", changes: []change{{"bootstrap_wire.toml", "[[contradiction]]\nid = \"flat-root-lifetime\"", `"flat-root-lifetime"`, `"bootstrap-dispatch"`}}, msg: `contradiction "bootstrap-dispatch" is declared twice`},
		{rule: "unique", changes: []change{{"linker.toml", "[[link_behaviour]]\nvariant = \"no-node\"", `"no-node"`, `"base-fallback"`}}, msg: `link behaviour "base-fallback" is declared twice`},
		{rule: "forward-name", changes: []change{{"forward.toml", `index = 4`, `"neuronBuildGraphComm"`, `"buildGraphComm"`}}, msg: `forward symbol "buildGraphComm" must be a C identifier starting with neuron`},
		{rule: "reverse-name", changes: []change{{"reverse.toml", "[[reverse]]\nname = \"nec_ndl_printk\"", `"nec_ndl_printk"`, `"ndl_printk"`}}, msg: `reverse symbol "ndl_printk" must be a C identifier starting with nec_ or nrt_`},
		{rule: "slot-range", changes: []change{{"release.toml", "[slot_table]", "top = 0xc968d8", "top = 0xc968e0"}}, msg: "holds 38 slots, but there are 37 forward rows"},
		{rule: "dlsym-index", changes: []change{{"forward.toml", `name = "neuronGetUniqueId"`, "", ""}, {"forward.toml", "[[forward]]\nindex = 1\n", "index = 1", "index = 37"}}, msg: "dlsym index 37 is outside 0..36"},
		{rule: "guard", changes: []change{{"forward.toml", `name = "neuronNetworkProxyProgress"`, `guard = "hot"`, `guard = "guarded"`}}, msg: "0 hot trampolines", atFile: "forward.toml", atAnchor: "[[forward]]"},
		{rule: "version-node", changes: []change{{"release.toml", `name = "NRT_3.0.0"`, `parent = "NRT_2.0.0"`, `parent = "NRT_9"`}}, msg: `names parent "NRT_9", which is not declared`},
		{rule: "reverse-version", changes: []change{{"reverse.toml", `name = "nec_rid_to_mla_idx"`, `version = "NRT_2.0.0"`, `version = "libnrt.so.1"`}}, msg: "bound to the BASE node libnrt.so.1; an unversioned callback does not satisfy"},
		{rule: "adapter-mapping", changes: []change{{"reverse.toml", `name = "nec_get_dynamic_send_size_bytes"`, `"dst_rank", "data_type_sz"]`, `"dest_rank", "data_type_sz"]`}}, msg: `passes "dest_rank" to enc_get_send_count_size_bytes, but nec_get_dynamic_send_size_bytes has no such parameter`},
		{rule: "reentrant", changes: []change{{"reverse.toml", `name = "nec_get_peer_mla_idx"`, `reenters = ["nrt_get_instance_info"]`, `reenters = ["neuronGetPeerDeviceId"]`}}, msg: "re-enters neuronGetPeerDeviceId across the seam"},
		{rule: "type", changes: []change{{"structs_nrt.toml", `name = "rt_minor"`, `type = "u64"`, `type = "u65"`}}, msg: `"u65" names u65, which is no builtin`},
		{rule: "struct-order", changes: []change{{"structs_nrt.toml", `name = "vtpb_idx"`, "offset = 8", "offset = 0"}}, msg: "enc_glb_comm.vtpb_idx at 0 comes after g_device_cnt at 4"},
		{rule: "struct-overlap", changes: []change{{"structs_nrt.toml", `name = "device_revision"`, "offset = 24", "offset = 20"}}, msg: "nrt_instance_info_t.device_revision at 20 overlaps arch_name, which ends at 24"},
		{rule: "struct-bounds", changes: []change{{"structs_nrt.toml", `name = "nrt_version_t"`, "size = 224", "size = 216"}}, msg: "nrt_version_t.git_hash at 160..224 lies outside the struct's 216 bytes", atFile: "structs_nrt.toml", atAnchor: "offset = 160"},
		{rule: "struct-align", changes: []change{{"structs_nrt.toml", `name = "reservation_id"`, "offset = 48", "offset = 44"}}, msg: "enc_glb_comm.reservation_id at offset 44 is not aligned for u64 (alignment 8 on x86-64)"},
		{rule: "struct-size", changes: []change{{"structs_nrt.toml", `name = "major"`, `type = "u64"`, "type = \"u64\"\n  size = 4"}}, msg: "nec_version_info_t.major declares size 4 but its type u64 has size 8", atFile: "structs_nrt.toml", atAnchor: "size = 4"},
		{rule: "struct-cycle", changes: []change{{"structs_nrt.toml", `name = "nccl_comm_node"`, `type = "enc_nccl_comm_node_t"`, `type = "enc_glb_comm"`}}, msg: "struct enc_glb_comm contains itself by value", atFile: "structs_nrt.toml", atAnchor: `name = "enc_glb_comm"`},
		{rule: "opaque-overlap", changes: []change{{"structs_nrt.toml", `name = "nccl_comm_info_t"`, "offset = 16\n  size = 1360", "offset = 12\n  size = 1364"}}, msg: "nccl_comm_info_t: opaque range 12..1376 overlaps field epoch at 8..16"},
		{rule: "enum", changes: []change{{"constants.toml", `name = "nec_pod_type_t"`, "size = 4", "size = 3"}}, msg: "enum nec_pod_type_t has size 3; use 4"},
		{rule: "enum", changes: []change{{"constants.toml", `name = "nec_pod_type_t"`, "size = 4", "size = 1"}, {"constants.toml", `name = "nec_pod_type_t"`, `"NEC_POD_TYPE_INVALID", value = 3`, `"NEC_POD_TYPE_INVALID", value = 256`}}, msg: "NEC_POD_TYPE_INVALID = 256 does not fit a 1-byte enum (0..255 with these values)"},
		{rule: "enum", changes: []change{{"constants.toml", `name = "nec_pod_type_t"`, `"NEC_POD_TYPE_INVALID", value = 3`, `"NEC_POD_TYPE_INVALID", value = 2`}}, msg: `NEC_POD_TYPE_SWITCH and NEC_POD_TYPE_INVALID of nec_pod_type_t share the value 2; state alias_of = "NEC_POD_TYPE_SWITCH" on NEC_POD_TYPE_INVALID`},
		{rule: "enum", changes: []change{{"constants.toml", `name = "nec_pod_type_t"`, `"NEC_POD_TYPE_INVALID", value = 3`, `"NEC_POD_TYPE_INVALID", value = 3, alias_of = "NEC_POD_TYPE_NONE"`}}, msg: `NEC_POD_TYPE_INVALID of nec_pod_type_t: alias_of = "NEC_POD_TYPE_NONE" but NEC_POD_TYPE_NONE = 0 and NEC_POD_TYPE_INVALID = 3`},
		{rule: "enum", changes: []change{{"constants.toml", `name = "nec_pod_type_t"`, `"NEC_POD_TYPE_NONE", value = 0`, `"NEC_POD_TYPE_NONE", value = 0, alias_of = "NEC_POD_TYPE_P2P"`}}, msg: `NEC_POD_TYPE_NONE of nec_pod_type_t: alias_of = "NEC_POD_TYPE_P2P" names no earlier enumerator`},
		{rule: "enum", changes: []change{{"constants.toml", `name = "nec_pod_type_t"`, `"NEC_POD_TYPE_INVALID", value = 3`, `"NEC_POD_TYPE_INVALID", value = 1, alias_of = "NEC_POD_TYPE_SWITCH"`}}, msg: `alias_of = "NEC_POD_TYPE_SWITCH" but the first enumerator with the value 1 is NEC_POD_TYPE_P2P`},
		{rule: "message-args", changes: []change{{"messages.toml", `id = "nccl_dlopen_failed"`, `args = ["dlerror()"]`, `args = []`}}, msg: "message nccl_dlopen_failed has 1 printf verbs but 0 args"},
		{rule: "constant", changes: []change{{"constants.toml", `name = "NCCOM_COMPAT_ID"`, "value = 89", `value = "89"`}}, msg: "NCCOM_COMPAT_ID is declared u64 but its value is string"},
		{rule: "release-name", changes: []change{{"release.toml", "[release]", `name = "2.31.24"`, `name = "2.31.25"`}}, msg: `release name "2.31.25" does not match its directory "2.31.24"`},
		{rule: "release-version", changes: []change{{"release.toml", "[release]", `runtime_version = "2.31.24.0"`, `runtime_version = "2.31.024.0"`}}, msg: `[release] runtime_version = "2.31.024.0": part 3 (024) has a leading zero`},
		{rule: "carried", changes: []change{{"release.toml", "[counts]", "reverse_nrt = 4", "carried_from = \"2.30.0\"\nreverse_nrt = 4"}}, msg: `[counts]: carried_from = "2.30.0", but the release derives from nothing`},
		{rule: "absent", changes: []change{{"structs_nrt.toml", `name = "device_revision"`, `source = "facts"`, "source = \"facts\"\n\n  [[struct.absent]]\n  name = \"size\" # planted\n  type = \"u32\"\n  conf = \"HIGH\"\n  source = \"test\""}},
			msg: "nrt_instance_info_t.size is marked absent, but the struct lists it as a field at ", atFile: "structs_nrt.toml", atAnchor: `name = "size" # planted`},
		{rule: "headers", changes: []change{{"release.toml", "[release.libnrt]", "[release.libnrt]", "[release.headers]\ntree = \"include\"\ncflags = [\"O2\"]\nconf = \"HIGH\"\nsource = \"test\"\n\n[release.libnrt]"}},
			msg: `[release.headers] cflags[0] = "O2": not one compiler flag`, atFile: "release.toml", atAnchor: `cflags = ["O2"]`},
		{rule: "derive", changes: []change{{"release.toml", "[release]", `name = "2.31.24"`, "name = \"2.31.24\"\nderived_from = \"9.9.9\""}}, msg: `derived_from = "9.9.9": no release "9.9.9"`, atFile: "release.toml", atAnchor: "derived_from"},
		{rule: "name", changes: []change{{"constants.toml", `name = "NRT_STATUS"`, `tag = "nrt_status"`, `tag = "nrt status"`}}, msg: `enum tag "nrt status" cannot be emitted as C`},
		{rule: "text", changes: []change{{"structs_nrt.toml", `name = "nrt_version_t"`, `source = "facts nrt_version_t"`, `source = "facts */ nrt_version_t"`}}, msg: `struct nrt_version_t: source: byte 6 starts "*/"`},
		{rule: "version-need", changes: []change{{"release.toml", "[release.libnccom]", `version = "NRT_2.0.0"`, `version = "NRT_4.0.0"`}}, msg: "libnccom needs NRT_4.0.0 from libnrt.so.1, which declares no such [[version_node]]"},
	}
	covered := map[string]bool{}
	for _, tc := range cases {
		covered[tc.rule] = true
		t.Run(tc.rule, func(t *testing.T) {
			dir := copyRelease(t, Default)
			line := 0
			for i, c := range tc.changes {
				l := edit(t, dir, c.file, c.anchor, c.old, c.repl)
				if i == len(tc.changes)-1 {
					line = l
				}
			}
			wantFile := tc.changes[len(tc.changes)-1].file
			if tc.atFile != "" {
				wantFile = tc.atFile
				data, _ := os.ReadFile(filepath.Join(dir, tc.atFile))
				line = strings.Count(string(data)[:strings.Index(string(data), tc.atAnchor)], "\n") + 1
			}
			_, err := LoadDir(dir)
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("want validation errors, got %v", err)
			}
			for _, e := range errs {
				if e.Rule == tc.rule && strings.Contains(e.Msg, tc.msg) {
					if filepath.Base(e.Pos.File) != wantFile || e.Pos.Line != line || e.Pos.Col < 1 {
						t.Errorf("error at %s, want %s:%d:(col)\n%v", e.Pos, wantFile, line, e)
					}
					if !strings.HasPrefix(e.Error(), e.Pos.String()+": ["+tc.rule+"] ") {
						t.Errorf("message %q does not start with file:line:col: [rule]", e.Error())
					}
					return
				}
			}
			t.Errorf("no [%s] error containing %q; got:\n%v", tc.rule, tc.msg, errs)
		})
	}
	for rule := range Rules {
		if !covered[rule] {
			t.Errorf("rule %q has no broken-spec case", rule)
		}
	}
}

// TestAllErrorsReported plants several independent faults in different files
// and expects every one of them in a single load, sorted by position.
func TestAllErrorsReported(t *testing.T) {
	dir := copyRelease(t, Default)
	edit(t, dir, "structs_nrt.toml", `name = "reservation_id"`, "offset = 48", "offset = 44")
	edit(t, dir, "reverse.toml", `name = "nec_ndl_printk"`, `conf = "HIGH"`, `conf = "SURE"`)
	edit(t, dir, "forward.toml", `name = "neuronGetUniqueId"`, "slot = ", "slto = ")
	_, err := LoadDir(dir)
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want errors, got %v", err)
	}
	rules := map[string]bool{}
	for _, e := range errs {
		rules[e.Rule] = true
	}
	for _, r := range []string{"struct-align", "conf", "unknown-key"} {
		if !rules[r] {
			t.Errorf("missing [%s] in\n%v", r, errs)
		}
	}
	for i := 1; i < len(errs); i++ {
		a, b := errs[i-1].Pos, errs[i].Pos
		if a.File > b.File || a.File == b.File && a.Line > b.Line {
			t.Errorf("errors not sorted: %s before %s", a, b)
		}
	}
}

func TestParseType(t *testing.T) {
	for _, tc := range []struct {
		in, out    string
		size, algn int
	}{
		{"u32", "u32", 4, 4},
		{"const char*", "const char*", 8, 8},
		{"void*[96]", "void*[96]", 768, 8},
		{"char[16]", "char[16]", 16, 1},
		{"u8[2][3]", "u8[2][3]", 6, 1},
		{"u64[]", "u64[]", 0, 8},
		{"u8[][6]", "u8[][6]", 0, 1}, // C's u8 mac[][6]: a flexible array of u8[6]
		{"volatile u32*", "volatile u32*", 8, 8},
		{"std::vector<std::vector<u32>>", "std::vector<std::vector<u32>>", 24, 8},
		{"pthread_mutex_t", "pthread_mutex_t", 40, 8},
	} {
		ty, err := ParseType(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if ty.String() != tc.out || ty.Size() != tc.size || ty.Align() != tc.algn {
			t.Errorf("%s: got %s size %d align %d, want %s %d %d", tc.in, ty, ty.Size(), ty.Align(), tc.out, tc.size, tc.algn)
		}
	}
	for _, bad := range []string{"", "u32[0]", "u32[x]", "std::vector", "std::map<u32>", "u32 &", "u8[2][]", "u8[][2][]"} {
		if _, err := ParseType(bad); err == nil {
			t.Errorf("ParseType(%q) accepted a bad type", bad)
		}
	}
}

func TestPositions(t *testing.T) {
	idx := newPosIndex()
	src := "# c\n[release]\nname = \"x\"\n\n[[struct]]\n  name = \"a\"\n  [[struct.field]]\n  name = \"f\" # c\n  [[struct.field]]\n  params = [ { name = \"p\", type = \"u32\" },\n    { name = \"q\" } ]\n[[struct]]\ntext = \"\"\"multi\n\"quoted\" ]\n\"\"\"\nname = 'b'\n"
	indexPositions(idx, "f.toml", src)
	for path, want := range map[string]string{
		"release.name":                      "f.toml:3:1",
		"struct[0].name":                    "f.toml:6:3",
		"struct[0].field[0].name":           "f.toml:8:3",
		"struct[0].field[1].params[0].type": "f.toml:10:28",
		"struct[0].field[1].params[1].name": "f.toml:11:7",
		"struct[1].name":                    "f.toml:16:1",
	} {
		p, ok := idx.at[path]
		if !ok || p.String() != want {
			t.Errorf("%s: got %v (%v), want %s", path, p, ok, want)
		}
	}
}

// TestRowPositions: the index every load builds (indexRows) places rows and
// what may hold nested rows exactly where the full index does, and leaves
// out the scalar keys that only an error message asks for.
func TestRowPositions(t *testing.T) {
	src := "[release]\nname = \"x\"\nlibnrt = { file = \"l\" }\n[[struct]]\n  name = \"a\"\n  field = [ { name = \"f\" },\n    { name = \"g\", params = [ 1 ] } ]\n"
	all, rows := newPosIndex(), newPosIndex()
	indexPositions(all, "f.toml", src)
	indexRows(rows, "f.toml", src)
	for _, path := range []string{"release", "release.libnrt", "struct[0]", "struct[0].field", "struct[0].field[1]", "struct[0].field[1].params", "struct[0].field[1].params[0]"} {
		p, ok := rows.at[path]
		if want := all.at[path]; !ok || p != want {
			t.Errorf("%s: rows index has %v (%v), the full index %v", path, p, ok, want)
		}
	}
	for _, path := range []string{"release.name", "release.libnrt.file", "struct[0].name", "struct[0].field[1].name"} {
		if _, ok := all.at[path]; !ok {
			t.Errorf("%s: not in the full index", path)
		}
		if p, ok := rows.at[path]; ok {
			t.Errorf("%s: a scalar key in the rows index (at %v)", path, p)
		}
	}
	j := 0
	for _, p := range all.order {
		if j < len(rows.order) && rows.order[j] == p {
			j++
		}
	}
	if j != len(rows.order) {
		t.Errorf("the rows index is not in file order: %v", rows.order)
	}
}
