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
	// Text groups the fields an insertion moved; --verbose and JSON list each.
	rc, text, _ := runCLI("diff", "2.31.24", "2.32.0-synthetic")
	if rc != 8 || !strings.Contains(text, "(11 fields after `nccl_comm_node` moved +8; --verbose lists each)") ||
		!strings.Contains(text, "(7 fields after `comm_gen` moved +8; --verbose lists each)") || strings.Count(text, "field-moved") != 2 {
		t.Errorf("text: exit %d\n%s", rc, text)
	}
	// --verbose lists the 18 moved fields under the 2 runs (docs/nrtabi-diff.md).
	if rc, verbose, _ := runCLI("diff", "--verbose", "2.31.24", "2.32.0-synthetic"); rc != 8 || strings.Count(verbose, "field-moved") != 2+18 {
		t.Errorf("--verbose: exit %d\n%s", rc, verbose)
	}
	if !strings.Contains(out, `"schema": "nrtabi.diff/1"`) || !strings.Contains(out, `"fields": [`) || !strings.Contains(out, `"new_size": 96`) {
		t.Errorf("json: no schema, run or numeric size:\n%s", out)
	}
	dir := brokenSpec(t, "messages.toml", "failed to get unique ID", "failed to get the unique ID")
	if rc, out, _ := runCLI("diff", "2.31.24", dir); rc != 0 || !strings.Contains(out, "message-changed  uid_failed") {
		t.Errorf("directory side: exit %d\n%s", rc, out)
	}
	if rc, _, errw := runCLI("diff", "2.31.24", "no-such-thing"); rc != 2 || !strings.Contains(errw, "neither a directory nor an embedded release; the embedded releases are: 2.20.0-synthetic, 2.31.24") {
		t.Errorf("bad side: exit %d %s", rc, errw)
	}
	if rc, _, _ := runCLI("diff", "2.31.24"); rc != 2 {
		t.Errorf("one side: exit %d, want 2", rc)
	}
}
