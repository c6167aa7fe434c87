package html_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/nrtabi/nrtabi/compat"
	"github.com/nrtabi/nrtabi/internal/render/html"
	"github.com/nrtabi/nrtabi/release/diff"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// screenshot regenerates the page's picture in the docs:
//
//	go test ./internal/render/html -run TestPageInBrowser -screenshot "$PWD/docs/nrtabi-diff-report.png"
var (
	screenshot       = flag.String("screenshot", "", "write a PNG of the 2.31.24 -> 2.32.0-synthetic page to this path")
	matrixScreenshot = flag.String("matrix-screenshot", "", "write a PNG of the embedded releases' compat matrix page to this path")
)

// browserBudget bounds the whole browser test: start, six pages, axe on
// each (docs/nrtabi-diff.md#html-report). It takes about 15 s on an idle
// machine and 30 s at a load of 40 on 2 cores; the bound is for a hung
// browser, not a slow one.
const browserBudget = 90 * time.Second

// TestPageInBrowser loads the page of the real diff 2.31.24 ->
// 2.32.0-synthetic in headless Chromium and checks what a reader gets:
// every fact there and reachable by Tab, every box and fact named in the
// browser's own accessibility tree, no box wider than its row, boxes as
// wide as their bytes, no request but the page itself, and no axe-core
// violation (contrast among them). Then five pages with a planted fault
// each (a box with no name, a box wider than its row, box text too faint,
// a fact left out, a fact Tab cannot reach) must each be caught by name. Cost: one
// Chromium, six pages, about 15 s (browserBudget).
func TestPageInBrowser(t *testing.T) {
	chromium := findChromium(t)
	axe := axeSource(t)
	old, err := compiled.Load("2.31.24")
	if err != nil {
		t.Fatal(err)
	}
	nw, err := compiled.Load("2.32.0-synthetic")
	if err != nil {
		t.Fatal(err)
	}
	page := diff.Diff(old, nw).Page(old, nw)
	dir := t.TempDir()
	path, err := html.WriteDir(dir, page)
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := wantFacts(page)
	if len(want) < 5 || len(page.Layouts) < 2 {
		t.Fatalf("the diff's page has %d facts and %d layouts: not the diff this test draws", len(want), len(page.Layouts))
	}

	ctx, cancel := context.WithTimeout(context.Background(), browserBudget)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900))
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	if err := chromedp.Do(bctx); err != nil { // start the browser
		t.Fatalf("starting %s: %v", chromium, err)
	}

	start := time.Now()
	problems := inspect(t, bctx, "file://"+path, axe, want, 0)
	t.Logf("the diff's page: %d facts, %d layouts, %d problems, %v", len(want), len(page.Layouts), len(problems), time.Since(start).Round(time.Millisecond))
	for _, p := range problems {
		t.Errorf("the diff's page: %s", p)
	}
	if *screenshot != "" {
		shoot(t, bctx, "file://"+path, *screenshot)
	}

	// Planted faults, each in a page of its own, each caught by its name.
	for _, pf := range []struct {
		name, re, repl, caught string
	}{
		{"a box with no name", `(<span class="box field g-none" role="img") aria-label="[^"]*" title="[^"]*"`, "$1", "no accessible name"},
		{"an overflowing box", `(<span class="box field g-none" role="img" aria-label="[^"]*" title="[^"]*" data-bytes="[0-9]+" style=")width: [0-9.]+%`, "${1}width: 150%", "wider than its row"},
		{"text too faint to read", `\.box > span \{ background: #fff; color: #111;`, ".box > span { background: #fff; color: #aaa;", "axe color-contrast"},
		{"a fact left out", `<li class="fact-item d0"><div class="fact g-informational"[^\n]*\n</li>`, "", "facts on the page, the report has"},
		{"a fact Tab cannot reach", `(<div class="fact g-informational" id="[^"]*") tabindex="0"`, "$1", "Tab never reaches"},
	} {
		re := regexp.MustCompile(pf.re)
		loc := re.FindIndex(good)
		if loc == nil {
			t.Fatalf("%s: the page has nothing to plant it in (%s)", pf.name, pf.re)
		}
		bad := append(append(append([]byte(nil), good[:loc[0]]...), re.Expand(nil, []byte(pf.repl), good, re.FindSubmatchIndex(good))...), good[loc[1]:]...)
		p := filepath.Join(t.TempDir(), "planted.html")
		if err := os.WriteFile(p, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		got := inspect(t, bctx, "file://"+p, axe, want, 0)
		t.Logf("planted %s: %d problems, %v, the first: %.200s", pf.name, len(got), time.Since(start).Round(time.Millisecond), strings.Join(got, "; "))
		if !anyContains(got, pf.caught) {
			t.Errorf("planted %s: not caught (want a problem saying %q), got %q", pf.name, pf.caught, got)
		}
	}
	matrixInBrowser(t, bctx, axe)
}

// matrixInBrowser: compat's release matrix of the embedded set, in the
// same browser (docs/nrtabi-compat.md#the-release-matrix): every cell with
// its word, every note link pointing to a note and reached by Tab, every
// cell and link named, no axe-core violation; a cell without its word and
// a note link Tab cannot reach are each caught by name.
func matrixInBrowser(t *testing.T, bctx context.Context, axe string) {
	var specs []*spec.Spec
	for _, r := range spec.Releases() {
		sp, err := compiled.Load(r)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, sp)
	}
	m := compat.ReleaseMatrix(compat.NewSet(specs))
	pg := m.Page("the embedded releases")
	path, err := html.WriteDir(t.TempDir(), pg)
	if err != nil {
		t.Fatal(err)
	}
	want := wantFacts(pg)
	if len(m.Cells) < 4 || len(want) == 0 {
		t.Fatalf("the matrix has %d cells and %d notes: not the matrix this test draws", len(m.Cells), len(want))
	}
	start := time.Now()
	problems := inspect(t, bctx, "file://"+path, axe, want, len(m.Cells))
	t.Logf("the matrix page: %d cells, %d notes, %d problems, %v", len(m.Cells), len(want), len(problems), time.Since(start).Round(time.Millisecond))
	for _, p := range problems {
		t.Errorf("the matrix page: %s", p)
	}
	if *matrixScreenshot != "" {
		shoot(t, bctx, "file://"+path, *matrixScreenshot)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, pf := range []struct{ name, re, repl, caught string }{
		{"a cell without its word", `(<td class="cell g-none" aria-label="[^"]*"><span class="badge">)loads`, "$1", "table cells with a verdict word"},
		{"a note link Tab cannot reach", `(<a class="note-ref" id="table-1-r1-c2-n1")`, `$1 tabindex="-1"`, "Tab never reaches note link table-1-r1-c2-n1"},
	} {
		re := regexp.MustCompile(pf.re)
		loc := re.FindSubmatchIndex(good)
		if loc == nil {
			t.Fatalf("%s: the page has nothing to plant it in (%s)", pf.name, pf.re)
		}
		bad := append(append(append([]byte(nil), good[:loc[0]]...), re.Expand(nil, []byte(pf.repl), good, loc)...), good[loc[1]:]...)
		p := filepath.Join(t.TempDir(), "planted.html")
		if err := os.WriteFile(p, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := inspect(t, bctx, "file://"+p, axe, want, len(m.Cells)); !anyContains(got, pf.caught) {
			t.Errorf("matrix page, planted %s: not caught (want %q), got %q", pf.name, pf.caught, got)
		}
	}
}

func anyContains(ss []string, sub string) bool {
	for _, s := range ss {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// findChromium is the browser, or a skip that says what to install.
func findChromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH: apt-get install -y --no-install-recommends chromium (.ci/run installs it)")
	return ""
}

// axeSource is axe-core's script: from NRTABI_AXE_JS (.ci/run installs
// axe-core into a scratch directory and names it there), else installed
// by npm into the test's own temporary directory, never into the tree.
func axeSource(t *testing.T) string {
	p := os.Getenv("NRTABI_AXE_JS")
	if p == "" {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Skip("no npm to fetch axe-core: apt-get install -y --no-install-recommends npm, or set NRTABI_AXE_JS to axe.min.js")
		}
		dir := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "install", "--silent", "--no-audit", "--no-fund", "--prefix", dir, "axe-core@4")
		cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(dir, ".npm"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm install axe-core@4: %v\n%s", err, out)
		}
		p = filepath.Join(dir, "node_modules", "axe-core", "axe.min.js")
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("axe-core: %v", err)
	}
	return string(b)
}

// fact is what the page must show of one fact: its kind and subject.
type fact struct{ Kind, Subject string }

func wantFacts(p html.Page) []fact {
	var out []fact
	var walk func(f html.Fact)
	walk = func(f html.Fact) {
		out = append(out, fact{f.Kind, f.Subject})
		for _, c := range f.Consequences {
			walk(c)
		}
	}
	for _, g := range p.Groups {
		for _, f := range g.Facts {
			walk(f)
		}
	}
	return out
}

// layoutJS measures the page: each fact's id, kind and subject; each box
// against its row (no wider than it, inside it) and against its bytes
// (width = bytes/BytesPerRow of the row, to a pixel).
const layoutJS = `(() => {
  const problems = [];
  const facts = [...document.querySelectorAll('.fact')].map(e => ({
    id: e.id, kind: (e.querySelector('.kind') || {}).textContent || '',
    subject: (e.querySelector('.subject') || {}).textContent || ''}));
  const boxes = [...document.querySelectorAll('.lane .box')];
  for (const b of boxes) {
    const lane = b.parentElement.getBoundingClientRect(), r = b.getBoundingClientRect();
    const what = b.getAttribute('aria-label') || b.textContent;
    if (r.width > lane.width + 0.5 || r.left < lane.left - 0.5 || r.right > lane.right + 0.5)
      problems.push('box ' + what + ' is wider than its row or outside it: ' + r.left.toFixed(1) + '..' + r.right.toFixed(1) + ' in ' + lane.left.toFixed(1) + '..' + lane.right.toFixed(1));
    const want = lane.width * Number(b.dataset.bytes) / BYTES;
    if (Math.abs(r.width - want) > 1)
      problems.push('box ' + what + ' is ' + r.width.toFixed(1) + ' px for ' + b.dataset.bytes + ' bytes, want ' + want.toFixed(1) + ' (not to scale)');
  }
  const cells = [...document.querySelectorAll('td.cell')].filter(c => (c.querySelector('.badge') || {}).textContent).length;
  const refs = [...document.querySelectorAll('a.note-ref')].map(a => a.id);
  for (const a of document.querySelectorAll('a.note-ref'))
    if (!document.getElementById(a.getAttribute('href').slice(1))) problems.push('note link ' + a.id + ' points to nothing');
  const doc = document.documentElement;
  if (doc.scrollWidth > doc.clientWidth + 1) problems.push('the page scrolls sideways: ' + doc.scrollWidth + ' > ' + doc.clientWidth);
  return {facts, refs, boxes: boxes.length, cells, problems};
})()`

type measured struct {
	Facts    []struct{ ID, Kind, Subject string }
	Refs     []string // the ids of the table cells' note links
	Boxes    int
	Cells    int
	Problems []string
}

// inspect loads url in a new tab and returns every problem it finds.
func inspect(t *testing.T, bctx context.Context, url, axe string, want []fact, cells int) []string {
	t.Helper()
	ctx, cancel := chromedp.NewContext(bctx)
	defer cancel()
	var mu sync.Mutex
	var requests []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests = append(requests, e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(url)); err != nil {
		t.Fatalf("loading %s: %v", url, err)
	}
	var problems []string
	m, err := chromedp.Run(ctx, chromedp.Evaluate[measured](strings.Replace(layoutJS, "BYTES", fmt.Sprint(html.BytesPerRow), 1)))
	if err != nil {
		t.Fatalf("measuring %s: %v", url, err)
	}
	t.Logf("%s: %d facts, %d boxes measured", filepath.Base(url), len(m.Facts), m.Boxes)
	problems = append(problems, m.Problems...)
	switch {
	case cells == 0 && m.Boxes == 0:
		problems = append(problems, "no box drawn: a layout check that measured nothing")
	case cells > 0 && m.Cells != cells:
		problems = append(problems, fmt.Sprintf("%d table cells with a verdict word on the page, the matrix has %d", m.Cells, cells))
	}
	// Every fact, once each, in the model's order.
	if len(m.Facts) != len(want) {
		problems = append(problems, fmt.Sprintf("%d facts on the page, the report has %d", len(m.Facts), len(want)))
	}
	for i := 0; i < len(want) && i < len(m.Facts); i++ {
		if m.Facts[i].Kind != want[i].Kind || m.Facts[i].Subject != want[i].Subject {
			problems = append(problems, fmt.Sprintf("fact %d is %s %s, want %s %s", i+1, m.Facts[i].Kind, m.Facts[i].Subject, want[i].Kind, want[i].Subject))
		}
	}
	problems = append(problems, axNames(t, ctx)...)
	problems = append(problems, tabOrder(t, ctx, m.Facts, m.Refs)...)
	problems = append(problems, axeViolations(t, ctx, axe)...)
	mu.Lock()
	for _, r := range requests {
		if r != url {
			problems = append(problems, "the page requested "+r+": it must load nothing")
		}
	}
	mu.Unlock()
	return problems
}

// axNames: every box and fact has a name in Chromium's accessibility tree.
func axNames(t *testing.T, ctx context.Context) []string {
	nodes, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSSAll(".lane .box, .fact, td.cell, a.note-ref")))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := chromedp.Call(ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[int64]string{}
	for _, n := range tree.Nodes {
		if n.Name != nil && len(n.Name.Value) > 0 {
			var s string
			if json.Unmarshal(n.Name.Value, &s) == nil {
				names[int64(n.BackendDOMNodeID)] = strings.TrimSpace(s)
			}
		}
	}
	var problems []string
	for _, n := range nodes {
		if names[int64(n.BackendNodeID)] == "" {
			problems = append(problems, fmt.Sprintf("%s id=%q class=%q has no accessible name", n.LocalName, n.AttributeValue("id"), n.AttributeValue("class")))
		}
	}
	if len(nodes) == 0 {
		problems = append(problems, "no box or fact in the accessibility check")
	}
	return problems
}

// tabOrder presses Tab until focus comes back round, and wants every fact
// among the elements it reached.
func tabOrder(t *testing.T, ctx context.Context, facts []struct{ ID, Kind, Subject string }, refs []string) []string {
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`)); err != nil {
		t.Fatal(err)
	}
	reached := map[string]bool{}
	limit := 3*len(facts) + len(refs) + 10 // every fact, its link, the note links, the verdict, and slack
	for i := 0; i < limit; i++ {
		if err := chromedp.Do(ctx, chromedp.KeyEvent("\t")); err != nil {
			t.Fatal(err)
		}
		id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement ? (document.activeElement.id || document.activeElement.tagName) : ''`))
		if err != nil {
			t.Fatal(err)
		}
		reached[id] = true
	}
	var problems []string
	for _, f := range facts {
		if !reached[f.ID] {
			problems = append(problems, fmt.Sprintf("Tab never reaches fact %s (%s %s)", f.ID, f.Kind, f.Subject))
		}
	}
	for _, r := range refs {
		if !reached[r] {
			problems = append(problems, "Tab never reaches note link "+r)
		}
	}
	return problems
}

// axeViolations runs axe-core's rules on the page; each violation is a
// problem.
func axeViolations(t *testing.T, ctx context.Context, axe string) []string {
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](axe)); err != nil {
		t.Fatalf("injecting axe-core: %v", err)
	}
	out, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`axe.run(document, {resultTypes: ['violations']}).then(r =>
	  r.violations.map(v => 'axe ' + v.id + ': ' + v.help + ' at ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', ')))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("running axe-core: %v", err)
	}
	passed, err := chromedp.Run(ctx, chromedp.Evaluate[int](`axe.getRules().length`))
	if err != nil || passed == 0 {
		t.Fatalf("axe-core has no rules (%v): a check that checked nothing", err)
	}
	return out
}

// shoot writes a PNG of the whole page.
func shoot(t *testing.T, bctx context.Context, url, path string) {
	ctx, cancel := chromedp.NewContext(bctx)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", path, len(png))
}
