// The test: every relative link in README.md and docs/*.md must resolve, so
// a page that is renamed or an anchor that is reworded breaks the build
// instead of a reader's click. Code comments cite anchors of sources.md;
// those anchors are held here too.

package docs

import (
	"bufio"
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The pages checked: the repository's README and every page of docs/.
func pages(t *testing.T) []string {
	t.Helper()
	ps, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(ps)
	return append([]string{filepath.Join("..", "README.md")}, ps...)
}

var (
	// An inline Markdown link or image: [text](target) or [text](target "title").
	// Text may hold one level of brackets (a link around `[x]`).
	inlineLink = regexp.MustCompile(`!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)
	inlineCode = regexp.MustCompile("`+[^`]*`+")
)

type link struct {
	page   string
	line   int
	target string
}

// scan returns the page's relative links and its anchors (Anchors).
// Fenced code blocks and inline code are skipped: a link-like text in an
// example is not a link.
func scan(data []byte, page string) (links []link, anchors map[string]bool) {
	fence := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trim := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trim, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~") {
			fence = trim[:3]
			continue
		}
		if strings.HasPrefix(line, "    ") && !strings.HasPrefix(trim, "-") && !strings.HasPrefix(trim, "|") {
			continue // an indented code block
		}
		text := inlineCode.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
			links = append(links, link{page, n, m[1]})
		}
	}
	return links, Anchors(data)
}

// check resolves every relative link of the given pages; it returns one
// line per link that does not resolve.
func check(files map[string][]byte) []string {
	anchorsOf := map[string]map[string]bool{}
	var all []link
	for p, data := range files {
		l, a := scan(data, p)
		anchorsOf[filepath.Clean(p)] = a
		all = append(all, l...)
	}
	var bad []string
	for _, l := range all {
		u, err := url.Parse(l.target)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s:%d: %s: %v", l.page, l.line, l.target, err))
			continue
		}
		if u.Scheme != "" || u.Host != "" {
			continue // an external link: not checked here
		}
		target := filepath.Clean(l.page)
		if u.Path != "" {
			target = filepath.Clean(filepath.Join(filepath.Dir(l.page), filepath.FromSlash(u.Path)))
			if _, err := os.Stat(target); err != nil {
				bad = append(bad, fmt.Sprintf("%s:%d: %s: no such file %s", l.page, l.line, l.target, target))
				continue
			}
		}
		if u.Fragment == "" || !strings.HasSuffix(target, ".md") {
			continue
		}
		a, ok := anchorsOf[target]
		if !ok {
			data, err := os.ReadFile(target)
			if err != nil {
				bad = append(bad, fmt.Sprintf("%s:%d: %s: %v", l.page, l.line, l.target, err))
				continue
			}
			_, a = scan(data, target)
			anchorsOf[target] = a
		}
		if !a[u.Fragment] {
			bad = append(bad, fmt.Sprintf("%s:%d: %s: %s has no anchor #%s (a heading slug or <a id=...>)", l.page, l.line, l.target, target, u.Fragment))
		}
	}
	sort.Strings(bad)
	return bad
}

func TestRelativeLinksResolve(t *testing.T) {
	files := map[string][]byte{}
	for _, p := range pages(t) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[p] = data
	}
	if len(files) < 2 {
		t.Fatalf("found %d pages; run from docs/", len(files))
	}
	for _, b := range check(files) {
		t.Error(b)
	}
}

// The checker itself must catch what it is for: a missing file, a missing
// anchor, and a heading slug that is not GitHub's.
func TestCheckerCatchesBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "a.md")
	other := filepath.Join(dir, "b.md")
	body := "# Title\n\n## The `x` option, again\n\n<a id=\"s001-3\"></a>\n" +
		"[ok](b.md) [ok](#the-x-option-again) [ok](b.md#s001-3) [ok](#s001-3)\n" +
		"`[not a link](nowhere.md)`\n```\n[not a link](nowhere.md)\n```\n" +
		"[bad](missing.md) [bad](#no-such) [bad](b.md#s001-9) [ext](https://example.com/x.md)\n"
	if err := os.WriteFile(other, []byte("<a id=\"s001-3\"></a>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := check(map[string][]byte{page: []byte(body)})
	if len(bad) != 3 {
		t.Fatalf("want 3 broken links (missing.md, #no-such, b.md#s001-9), got %d:\n%s", len(bad), strings.Join(bad, "\n"))
	}
	for i, want := range []string{"#no-such", "b.md#s001-9", "missing.md"} {
		if !strings.Contains(bad[i], want) {
			t.Errorf("broken link %d = %q, want it to name %s", i, bad[i], want)
		}
	}
}

// The anchors that code comments and spec rows cite must exist: the
// citations point at them, so renaming one is a breaking change.
func TestSourceAnchors(t *testing.T) {
	data, err := os.ReadFile("sources.md")
	if err != nil {
		t.Fatal(err)
	}
	_, a := scan(data, "sources.md")
	want := []string{
		"s000", "s000-abstract", "s000-1", "s000-1-quirk", "s000-2", "s000-2-gotcha",
		"s000-2-note", "s000-3", "s000-3-quirk", "s000-4", "s000-4-note-reentry",
		"s000-4-quirk", "s000-nec-count", "s000-correction-enc-08", "s000-4-note-dynsym",
		"s001", "s001-abstract", "s001-abstract-quirk", "s001-1", "s001-1-note", "s001-2",
		"s001-3", "s001-3-gotcha", "s001-4", "s001-correction-nccom-init-1", "s001-5",
		"s001-6", "s001-7", "s004", "s004-abstract", "s004-1", "s004-1-quirk", "s004-2",
		"s004-2-note", "s004-3", "s004-4", "s004-4-quirk", "s004-4-gotcha", "s004-5",
		"s004-5-quirk", "s004-5-gotcha", "s004-5-note", "s004-6", "s004-6-gotcha",
		"s004-6-quirk", "s004-6-note-world", "s004-6-note-setup", "ref-abi",
		"ref-abi-identity", "ref-abi-constants", "ref-abi-forward", "ref-abi-reverse",
		"ref-abi-structs", "ref-abi-strings", "ref-abi-linker", "ref-nccl29", "ref-scale",
	}
	for _, w := range want {
		if !a[w] {
			t.Errorf("sources.md has no anchor %q", w)
		}
	}
}
