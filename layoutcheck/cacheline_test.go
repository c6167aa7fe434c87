package layoutcheck

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
)

func cachelineLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "--- cacheline") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// TestShowCachelines: a member spanning several cachelines gets one comment,
// for the last boundary crossed before the next member, as pahole prints it
// (compared with pahole itself when it is installed).
func TestShowCachelines(t *testing.T) {
	obj := compileTypes(t, "struct big { char a; char arr[200]; int after; long x[20]; int y; char z[64]; };\nstruct big gb;\n")
	var b bytes.Buffer
	if _, err := Show(context.Background(), obj, "big", ShowOptions{DebugDirs: []string{t.TempDir()}}, &b); err != nil {
		t.Fatal(err)
	}
	got := cachelineLines(b.String())
	want := []string{
		"/* --- cacheline 3 boundary (192 bytes) was 12 bytes ago --- */",
		"/* --- cacheline 5 boundary (320 bytes) was 48 bytes ago --- */",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("cacheline comments:\n%s\nwant:\n%s\nshow:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), b.String())
	}
	pahole, err := exec.LookPath("pahole")
	if err != nil {
		t.Logf("pahole not installed: compared with the expected lines only")
		return
	}
	out, err := exec.Command(pahole, "-C", "big", obj).Output()
	if err != nil {
		t.Fatalf("pahole: %v", err)
	}
	if p := cachelineLines(string(out)); strings.Join(p, "\n") != strings.Join(got, "\n") {
		t.Fatalf("pahole prints:\n%s\nshow prints:\n%s", strings.Join(p, "\n"), strings.Join(got, "\n"))
	}
}
