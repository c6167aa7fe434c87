package spec

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The confidence scale has LOW between MED and INFERRED (the seeds grade
// HIGH, MED and LOW): a row and a conf_fields key may carry it, and the
// message for a level that is none lists all four.
func TestConfLow(t *testing.T) {
	dir := copyRelease(t, Default)
	edit(t, dir, "reverse.toml", `name = "nec_ndl_printk"`, `conf = "HIGH"`, `conf = "LOW"`)
	edit(t, dir, "structs_nrt.toml", `name = "rt_minor"`, `conf = "HIGH"`, "conf = \"HIGH\"\n  conf_fields = { type = \"LOW\" }")
	s, err := LoadDir(dir)
	if err != nil {
		t.Fatalf("LOW refused: %v", err)
	}
	if r := s.ReverseByName("nec_ndl_printk"); r == nil || r.Conf != Low {
		t.Errorf("nec_ndl_printk conf = %+v, want LOW", r)
	}
	if got := Conf("LOW").Rank(); got != 2 || High.Rank() != 0 || Inferred.Rank() != 3 || Conf("SURE").Rank() != -1 {
		t.Errorf("ranks: LOW %d, HIGH %d, INFERRED %d, SURE %d; want 2, 0, 3, -1", got, High.Rank(), Inferred.Rank(), Conf("SURE").Rank())
	}
	// The shipped spec grades what seed 001 marks LOW (cluster_id, epoch) LOW.
	ref, err := Load(Default)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{"bootstrap_root_reply", "ncclComm", "nccl_comm_info_t"} {
		for _, name := range []string{"cluster_id", "epoch"} {
			f := fieldOf(ref.StructByName(st), name)
			if f == nil || f.ConfOf("name") != Low || f.ConfOf("offset") != High {
				t.Errorf("%s.%s: name conf %v, offset conf %v; want LOW and HIGH (docs/sources.md#s001-3)", st, name, f.ConfOf("name"), f.ConfOf("offset"))
			}
		}
	}
	for _, bad := range []struct{ file, anchor, old, repl string }{
		{"reverse.toml", `name = "nec_ndl_printk"`, `conf = "HIGH"`, `conf = "LO"`},
		{"reverse.toml", `name = "nec_ndl_printk"`, `conf = "HIGH"`, "conf = \"HIGH\"\nconf_fields = { addr = \"low\" }"},
	} {
		dir := copyRelease(t, Default)
		line := edit(t, dir, bad.file, bad.anchor, bad.old, bad.repl)
		_, err := LoadDir(dir)
		var errs Errors
		if !errors.As(err, &errs) {
			t.Fatalf("%s: want errors, got %v", bad.repl, err)
		}
		found := false
		for _, e := range errs {
			if e.Rule == "conf" && strings.HasSuffix(e.Msg, "use HIGH, MED, LOW or INFERRED") && filepath.Base(e.Pos.File) == bad.file && e.Pos.Line >= line && e.Pos.Line <= line+1 {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no [conf] error listing LOW at %s:%d; got\n%v", bad.repl, bad.file, line, errs)
		}
	}
}

func fieldOf(st *Struct, name string) *Field {
	if st == nil {
		return nil
	}
	for i := range st.Fields {
		if st.Fields[i].Name == name {
			return &st.Fields[i]
		}
	}
	return nil
}

// An [[extension]] row is read, kept in the JSON view and written back; each
// of its required keys, its id's grammar and the one namespace it shares
// with the contradictions is held at the row's file:line:col.
func TestExtensionRows(t *testing.T) {
	s, err := Load(Default)
	if err != nil {
		t.Fatal(err)
	}
	x := s.ExtensionByID("cluster-epoch-minting")
	if x == nil || x.Conf != Inferred || x.Seed == "" || x.Ours == "" || x.Reason == "" {
		t.Fatalf("extension cluster-epoch-minting: %+v", x)
	}
	if s.ContradictionByID("total-vnc-count-signature") == nil {
		t.Error("no contradiction total-vnc-count-signature")
	}
	js, err := json.Marshal(s.View())
	if err != nil {
		t.Fatal(err)
	}
	var view struct {
		Extensions []map[string]any `json:"extensions"`
	}
	if err := json.Unmarshal(js, &view); err != nil {
		t.Fatal(err)
	}
	if len(view.Extensions) != len(s.Extensions) || len(view.Extensions) == 0 || view.Extensions[0]["id"] == nil || view.Extensions[0]["reason"] == nil {
		t.Errorf("the JSON view (nrtabi spec show --format json) shows extensions %v", view.Extensions)
	}

	const anchor = `id = "nec-peer-mla-no-assert"`
	cases := []struct {
		name, old, repl, rule, msg, at string
	}{
		{"no reason", "reason = ", "reason_ = ", "unknown-key", `unknown key "reason_"`, "reason_"},
		{"bad slug", anchor, `id = "Nec_Peer"`, "required", `extension id "Nec_Peer" is not a slug`, ""},
		{"double hyphen", anchor, `id = "nec--peer"`, "required", "a hyphen may only join two words", ""},
		{"shared namespace", anchor, `id = "nec-count"`, "unique", `extension "nec-count" is also a contradiction id`, ""},
		{"twice", anchor, `id = "cluster-epoch-minting"`, "unique", `extension "cluster-epoch-minting" is declared twice`, ""},
		{"no ours", `ours = "a failed`, `ourz = "a failed`, "unknown-key", `unknown key "ourz"`, "ourz"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyRelease(t, Default)
			edit(t, dir, "extensions.toml", anchor, tc.old, tc.repl)
			at := tc.at
			if at == "" {
				at = tc.repl
			}
			wantErrAt(t, dir, "extensions.toml", at, tc.rule, tc.msg)
		})
	}

	// A row missing each required key in turn.
	for _, key := range []string{"id", "topic", "seed", "ours", "reason"} {
		t.Run("missing "+key, func(t *testing.T) {
			dir := copyRelease(t, Default)
			row := map[string]string{"id": `"x-row"`, "topic": `"t"`, "seed": `"s"`, "ours": `"o"`, "reason": `"r"`}
			row[key] = `" "`
			var b strings.Builder
			b.WriteString("\n[[extension]]\n")
			for _, k := range []string{"id", "topic", "seed", "ours", "reason"} {
				b.WriteString(k + " = " + row[k] + "\n")
			}
			b.WriteString("conf = \"HIGH\"\nsource = \"test\"\n")
			appendFile(t, filepath.Join(dir, "extensions.toml"), b.String())
			msg := "needs " + key
			if key == "id" {
				msg = `extension id " " is not a slug`
			}
			wantErrAt(t, dir, "extensions.toml", key+" = \" \"", "required", msg)
		})
	}
	// A contradiction without what it chose records nothing.
	t.Run("contradiction without chosen", func(t *testing.T) {
		dir := copyRelease(t, Default)
		edit(t, dir, "contradictions.toml", `id = "total-vnc-count-signature"`, `chosen = "the facts`, "chosen = \" \"\nnote = \"the facts")
		wantErrAt(t, dir, "contradictions.toml", `chosen = " "`, "required", `contradiction "total-vnc-count-signature" needs chosen`)
	})
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// wantErrAt loads dir and wants an error of rule (any, if "") containing msg
// on the line of file that holds at.
func wantErrAt(t *testing.T, dir, file, at, rule, msg string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndex(string(data), at)
	if i < 0 {
		t.Fatalf("%s: %q not found", file, at)
	}
	line := strings.Count(string(data)[:i], "\n") + 1
	_, err = LoadDir(dir)
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want errors, got %v", err)
	}
	for _, e := range errs {
		if (rule == "" || e.Rule == rule) && strings.Contains(e.Msg, msg) && filepath.Base(e.Pos.File) == file && e.Pos.Line == line && e.Pos.Col >= 1 {
			return
		}
	}
	t.Errorf("no [%s] error %q at %s:%d; got\n%v", rule, msg, file, line, errs)
}
