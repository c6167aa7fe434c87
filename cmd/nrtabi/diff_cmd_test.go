package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDiffCommand(t *testing.T) {
	if rc, out, _ := runCLI("diff", "2.31.24", "2.31.24"); rc != 0 || !strings.Contains(out, "verdict: no changes") {
		t.Errorf("same release: exit %d\n%s", rc, out)
	}
	rc, out, errw := runCLI("diff", "2.31.24", "2.32.0-synthetic", "--format", "json")
	if rc != 8 {
		t.Fatalf("exit %d, want 8: %s", rc, errw)
	}
	var r struct {
		Changes []struct{ Kind, Severity, Subject string }
		Summary struct{ Incompatible, Exit int }
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Summary.Exit != 8 || r.Summary.Incompatible == 0 {
		t.Errorf("json: %v %+v", err, r.Summary)
	}
	dir := brokenSpec(t, "messages.toml", "failed to get unique ID", "failed to get the unique ID")
	if rc, out, _ := runCLI("diff", "2.31.24", dir); rc != 0 || !strings.Contains(out, "message-changed  uid_failed") {
		t.Errorf("directory side: exit %d\n%s", rc, out)
	}
	if rc, _, errw := runCLI("diff", "2.31.24", "no-such-thing"); rc != 1 || !strings.Contains(errw, "neither an embedded release") {
		t.Errorf("bad side: exit %d %s", rc, errw)
	}
	if rc, _, _ := runCLI("diff", "2.31.24"); rc != 2 {
		t.Errorf("one side: exit %d, want 2", rc)
	}
}
