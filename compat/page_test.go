package compat_test

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/compat"
	page "github.com/nrtabi/nrtabi/internal/render/html"
)

var (
	rowRe  = regexp.MustCompile(`(?s)<tr><th scope="row">([^<]*)</th>(.*?)</tr>`)
	cellRe = regexp.MustCompile(`(?s)<td class="cell g-([a-z]+)" aria-label="([^"]*)"><span class="badge">([^<]*)</span>(.*?)</td>`)
	refRe  = regexp.MustCompile(`<a class="note-ref" id="[^"]*" href="#(fact-1-[0-9]+)"[^>]*>\[([0-9]+)\]</a>`)
	noteRe = regexp.MustCompile(`<div class="fact g-[a-z]+" id="(fact-1-[0-9]+)" tabindex="0"`)
)

// matrixPageProblems reads the page back and holds it to the model: every
// pairing a cell in its row and column with its class as its word, every
// note of a cell a link to the note of that number, every note on the page.
func matrixPageProblems(b []byte, m *compat.Matrix) []string {
	var problems []string
	want := map[[2]string]compat.Cell{}
	for _, c := range m.Cells {
		want[[2]string{c.Libnrt, c.Libnccom}] = c
	}
	notes := map[string]bool{}
	for _, n := range noteRe.FindAllSubmatch(b, -1) {
		notes[string(n[1])] = true
	}
	if len(notes) != len(m.Notes) {
		problems = append(problems, fmt.Sprintf("%d notes on the page, the matrix has %d", len(notes), len(m.Notes)))
	}
	rows := rowRe.FindAllSubmatch(b, -1)
	if len(rows) != len(m.Releases) {
		problems = append(problems, fmt.Sprintf("%d rows on the page, the matrix has %d releases", len(rows), len(m.Releases)))
	}
	seen := 0
	for _, r := range rows {
		a := html.UnescapeString(string(r[1]))
		cells := cellRe.FindAllSubmatch(r[2], -1)
		if len(cells) != len(m.Releases) {
			problems = append(problems, fmt.Sprintf("row %s has %d cells, want %d", a, len(cells), len(m.Releases)))
			continue
		}
		for i, c := range cells {
			b := m.Releases[i]
			w, ok := want[[2]string{a, b}]
			if !ok {
				problems = append(problems, fmt.Sprintf("row %s: no such pairing in the matrix", a))
				continue
			}
			seen++
			if string(c[3]) != string(w.Verdict) || !strings.Contains(html.UnescapeString(string(c[2])), "libnccom "+b+": "+string(w.Verdict)) {
				problems = append(problems, fmt.Sprintf("cell %s × %s says %q (%s), the matrix %s", a, b, c[3], c[2], w.Verdict))
			}
			refs := refRe.FindAllSubmatch(c[4], -1)
			if len(refs) != len(w.Notes) {
				problems = append(problems, fmt.Sprintf("cell %s × %s links %d notes, the matrix gives it %d", a, b, len(refs), len(w.Notes)))
				continue
			}
			for k, ref := range refs {
				if id := fmt.Sprintf("fact-1-%d", w.Notes[k]+1); string(ref[1]) != id || string(ref[2]) != fmt.Sprint(w.Notes[k]+1) || !notes[id] {
					problems = append(problems, fmt.Sprintf("cell %s × %s: note link %s [%s], want %s to a note on the page", a, b, ref[1], ref[2], id))
				}
			}
		}
	}
	if seen != len(m.Cells) {
		problems = append(problems, fmt.Sprintf("%d cells on the page, the matrix has %d", seen, len(m.Cells)))
	}
	return problems
}

// TestMatrixPage: the page of the embedded set's matrix holds every cell
// and note (docs/nrtabi-compat.md#the-release-matrix), and the reading
// back catches a cell dropped, a word changed, a note link dropped and a
// note dropped.
func TestMatrixPage(t *testing.T) {
	m := compat.ReleaseMatrix(set(t))
	var b bytes.Buffer
	if err := page.Write(&b, m.Page("the embedded releases")); err != nil {
		t.Fatal(err)
	}
	good := b.Bytes()
	if p := matrixPageProblems(good, m); len(p) > 0 || len(m.Notes) == 0 {
		t.Fatalf("the matrix page (%d notes): %q", len(m.Notes), p)
	}
	for _, pf := range []struct{ name, re, repl, caught string }{
		{"a cell dropped", `<td class="cell g-none"[^\n]*?</td>`, "", "cells, want"},
		{"a word changed", `<span class="badge">compat-gate</span>`, `<span class="badge">loads</span>`, "says"},
		{"a note link dropped", ` <a class="note-ref" id="[^"]*" href="#fact-1-1"[^>]*>\[1\]</a>`, "", "links 0 notes"},
		{"a note dropped", `(<div class="fact g-[a-z]+" id="fact-1-2") tabindex="0"`, `$1`, "notes on the page"},
	} {
		re := regexp.MustCompile(pf.re)
		if !re.Match(good) {
			t.Fatalf("%s: nothing to plant it in", pf.name)
		}
		bad := []byte(strings.Replace(string(good), string(re.Find(good)), string(re.ReplaceAll(re.Find(good), []byte(pf.repl))), 1))
		if got := matrixPageProblems(bad, m); !anyHas(got, pf.caught) {
			t.Errorf("planted %s: not caught (want %q), got %q", pf.name, pf.caught, got)
		}
	}
	// Outside text is escaped: a release name from a spec directory.
	m.Releases[0] = `<script>x</script>`
	b.Reset()
	if err := page.Write(&b, m.Page(`--spec "<b>"`)); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte("<script>x")) || bytes.Contains(b.Bytes(), []byte("<b>")) {
		t.Errorf("a release name reached the page unescaped")
	}
}

func anyHas(ss []string, sub string) bool {
	for _, s := range ss {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
