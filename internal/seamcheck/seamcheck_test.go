package seamcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	res, err := Check(Config{Dir: root, Overlay: map[string][]byte{file: []byte(planted)}})
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
