package html

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const hostile = `"><script>alert(1)</script><img src=x onerror=y>`

// TestEscapes: a name from a binary or a spec reaches the page as text in
// every place it shows (heading, fact, picture, box name), never as a tag
// or an attribute.
func TestEscapes(t *testing.T) {
	p := Page{Title: hostile, Lines: []string{hostile}, Verdict: Verdict{Grade: Incompatible, Text: hostile},
		Groups: []Group{{Name: hostile, Facts: []Fact{{Grade: Grade(hostile), Kind: hostile, Subject: hostile, Change: hostile, Detail: hostile, Layout: hostile,
			Consequences: []Fact{{Grade: Compatible, Kind: hostile, Subject: hostile}}}}}},
		Layouts: []Layout{{Name: hostile, Old: Side{Label: hostile, Size: 8, Members: []Member{{Name: hostile, Type: hostile, Size: 4, Mark: hostile}}},
			New: Side{Label: hostile, Absent: true}}}}
	var b bytes.Buffer
	if err := Write(&b, p); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if strings.Contains(s, "<script") || strings.Contains(s, "<img") || strings.Contains(s, "onerror=y>") || strings.Contains(s, "g-\"") {
		t.Errorf("an outside string escaped its text:\n%s", s)
	}
	if n := strings.Count(s, "&lt;script&gt;"); n < 10 {
		t.Errorf("the name shows %d times, escaped; want it in every place", n)
	}
}

// TestItems: the gaps between members are holes, the bytes after the last
// padding; a member over the one before it is drawn from where that ends.
func TestItems(t *testing.T) {
	got := items(Side{Size: 16, Members: []Member{{Name: "b", Offset: 4, Size: 4}, {Name: "a", Size: 2}, {Name: "c", Offset: 6, Size: 4}, {Name: "d", Offset: 7, Size: 1}}})
	var words []string
	for _, it := range got {
		words = append(words, fmt.Sprintf("%s:%s@%d+%d", it.kind, it.Name, it.Offset, it.Size))
	}
	if w := "field:a@0+2 hole:hole@2+2 field:b@4+4 field:c@8+2 pad:padding@10+6"; strings.Join(words, " ") != w {
		t.Errorf("got  %s\nwant %s", strings.Join(words, " "), w)
	}
}

// TestPictureRows: a full row's boxes add up to the row; a member many
// rows long is one elided row that names it; a struct of more rows than a
// picture draws says how many it left out.
func TestPictureRows(t *testing.T) {
	l := Layout{Name: "s", Old: Side{Size: 912, Members: []Member{{Name: "x", Size: 8}, {Name: "big", Offset: 8, Size: 900}}}, New: Side{Absent: true}}
	p := draw(l, "layout-1")
	var sum float64
	for _, b := range p.Rows[0].Old.Boxes {
		sum += b.Width
	}
	if sum != 100 {
		t.Errorf("row 0 widths add to %v%%", sum)
	}
	elided := 0
	for _, r := range p.Rows {
		if r.Elided {
			elided++
			if !strings.Contains(r.Old.Note, "big continues: 27 rows (864 bytes)") || r.New.Note != "not described on this side" {
				t.Errorf("elided row: %q / %q", r.Old.Note, r.New.Note)
			}
		}
	}
	if elided != 1 || len(p.Rows) != 3 {
		t.Errorf("%d rows, %d elided; want 3 and 1", len(p.Rows), elided)
	}
	var many []Member
	for off := int64(0); off < 40000; off += 2 {
		many = append(many, Member{Name: "f", Offset: off, Size: 1})
	}
	p = draw(Layout{Name: "wide", Old: Side{Size: 40000, Members: many}, New: Side{Size: 40000, Members: many}}, "layout-1")
	if len(p.Rows) != maxRows || p.Dropped != 40000/BytesPerRow-maxRows {
		t.Errorf("%d rows, %d dropped", len(p.Rows), p.Dropped)
	}
}

// TestWriteDir: the page replaces index.html whole and leaves no temporary
// file; an index.html that is a directory is refused and left as it is;
// a DIR that is a file is refused.
func TestWriteDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, IndexName), []byte("old page"), 0o644); err != nil {
		t.Fatal(err)
	}
	path, err := WriteDir(dir, Page{Title: "new page"})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !bytes.Contains(b, []byte("<h1>new page</h1>")) || !bytes.HasSuffix(b, []byte("</html>\n")) {
		t.Errorf("not the new page whole:\n%s", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left beside it: %v", ents)
	}
	blocked := t.TempDir()
	os.Mkdir(filepath.Join(blocked, IndexName), 0o755)
	if _, err := WriteDir(blocked, Page{}); err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Errorf("index.html a directory: %v", err)
	}
	if ents, _ := os.ReadDir(blocked); len(ents) != 1 || !ents[0].IsDir() {
		t.Errorf("after the refusal: %v", ents)
	}
	if _, err := WriteDir(path, Page{}); err == nil {
		t.Errorf("DIR a file: no error")
	}
}
