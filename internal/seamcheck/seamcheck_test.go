package seamcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// The check bites: reverse.go with two planted calls into the forward leg —
// GetVersionInfo() straight inside nrtTotalVNCCount, and a bootstrap send
// hidden in a deferred closure of nrtPrintk through the Bootstrap adapter's
// method — gives one violation for each, with the call path, and none for
// the untouched callbacks.
func TestCheckCatchesPlantedCalls(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "runtime", "nrt", "reverse.go")
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	planted := string(src)
	for _, p := range [][2]string{
		{"func nrtTotalVNCCount(out *C.uint32_t) C.uint32_t {\n", "func nrtTotalVNCCount(out *C.uint32_t) C.uint32_t {\n\t_, _ = GetVersionInfo()\n"},
		{"func nrtPrintk(str *C.char, size, action C.uint32_t) {\n", "func nrtPrintk(str *C.char, size, action C.uint32_t) {\n\tdefer func() { _ = Bootstrap{}.BootstrapSend(nil, 0, nil, \"planted\") }()\n"},
	} {
		if !strings.Contains(planted, p[0]) {
			t.Fatalf("reverse.go no longer has %q to plant into", p[0])
		}
		planted = strings.Replace(planted, p[0], p[1], 1)
	}
	res, err := Check(Config{Dir: root, Tags: abi.BuildTag, Overlay: map[string][]byte{file: []byte(planted)}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, v := range res.Violations {
		got[v.Callback] = v.String()
		t.Log(v)
	}
	want := map[string]string{"nrtTotalVNCCount": "_Cfunc_ncclGetVersionInfo", "nrtPrintk": "_Cfunc_ncclBootstrapSend"}
	for cb, sink := range want {
		if !strings.Contains(got[cb], sink) {
			t.Errorf("planted call in %s: violation %q, want a path to %s", cb, got[cb], sink)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d violations, want %d: %v", len(got), len(want), got)
	}
}

// The shims' object: on the tree it refers to the Go callbacks and libc but to
// nothing forward; with a planted ncclGetVersionInfo() call (an inline
// trampoline) it reads the slot table, and with a planted call of the
// handoff it calls nrt_handoff_run, and the check names both.
func TestCheckShimsCatchesPlantedCalls(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	clean, err := CheckShims(Config{Dir: root, Tags: abi.BuildTag})
	if err != nil {
		t.Fatal(err)
	}
	if len(clean.Forward) > 0 {
		t.Errorf("reverse.c refers to the forward leg: %v", clean.Forward)
	}
	if !contains(clean.Undefined, "nrtTotalVNCCount") || !contains(clean.Undefined, "nrtPrintk") {
		t.Errorf("the object of reverse.c does not call the Go callbacks; the check reads the wrong thing: %v", clean.Undefined)
	}
	file := filepath.Join(root, "runtime", "nrt", ShimsFile)
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	planted := strings.Replace(string(src), "#include \"handoff.h\"\n", "#include \"handoff.h\"\n#include \"nrt_slots.h\"\n", 1)
	for _, p := range [][2]string{
		{"NRT_STATUS nrt_get_total_vnc_count(uint32_t *out)\n{\n", "NRT_STATUS nrt_get_total_vnc_count(uint32_t *out)\n{\n\tnec_version_info_t v;\n\t(void)ncclGetVersionInfo(&v, sizeof v);\n"},
		{"void nec_ndl_printk(char *str, uint32_t size, uint32_t action)\n{\n", "void nec_ndl_printk(char *str, uint32_t size, uint32_t action)\n{\n\t(void)nrt_handoff_run(NULL, NULL, NULL, NULL);\n"},
	} {
		if !strings.Contains(planted, p[0]) {
			t.Fatalf("reverse.c no longer has %q to plant into", p[0])
		}
		planted = strings.Replace(planted, p[0], p[1], 1)
	}
	bad, err := CheckShims(Config{Dir: root, Tags: abi.BuildTag, Overlay: map[string][]byte{file: []byte(planted)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("planted: forward symbols %v", bad.Forward)
	for _, want := range []string{"nrt_nccl_slots", "nrt_handoff_run"} {
		if !contains(bad.Forward, want) {
			t.Errorf("planted calls: forward symbols %v, want %s among them", bad.Forward, want)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
