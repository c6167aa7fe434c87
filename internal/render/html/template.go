package html

import (
	"html/template"
	"sync"
)

// pageTemplate is the whole page. html/template escapes every string by
// its context (text, attribute, CSS), so a name from a binary's DWARF or a
// spec cannot open a tag, an attribute or a script. The style is inline
// and the page has no script and loads nothing: it opens from a CI
// artifact as it is. It is parsed on the first page written, not when the
// binary starts: every command of nrtabi links this package, few write a
// page (docs/benchmarks.md#start-up-2026-12-02).
var pageTemplate = sync.OnceValue(func() *template.Template { return template.Must(template.New("page").Parse(pageText)) })

const pageText = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
` + style + `
</style>
</head>
<body>
<header>
<h1>{{.Title}}</h1>
{{range .Lines}}<p class="side">{{.}}</p>
{{end}}</header>
<main>
<section aria-labelledby="verdict-h">
<h2 id="verdict-h">Verdict</h2>
<p class="verdict g-{{.Verdict.Grade}}" id="verdict" tabindex="0"><span class="badge">{{.Verdict.Grade}}</span> {{.Verdict.Text}}</p>
</section>
{{range .Tables}}<section aria-labelledby="{{.ID}}-h">
<h2 id="{{.ID}}-h">{{.Caption}}</h2>
<table class="matrix" id="{{.ID}}" aria-labelledby="{{.ID}}-h">
<thead><tr><th scope="col">{{.Corner}}</th>{{range .Columns}}<th scope="col">{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr><th scope="row">{{.Head}}</th>{{range .Cells}}<td class="cell g-{{.Grade}}" aria-label="{{.Label}}"><span class="badge">{{.Text}}</span>{{range .Notes}} <a class="note-ref" id="{{.RefID}}" href="#{{.ID}}" aria-label="note {{.N}}: {{.Label}}">[{{.N}}]</a>{{end}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
</section>
{{end}}<section aria-labelledby="facts-h">
<h2 id="facts-h">Facts</h2>
<p>Each fact once, what it forces elsewhere indented under it (→); {{.Count}} rows in all. Tab moves from fact to fact.</p>
{{range .Groups}}<h3>{{.Name}}</h3>
<ul class="facts">
{{range .Facts}}{{template "fact" .}}{{end}}</ul>
{{end}}</section>
{{if .Pictures}}<section aria-labelledby="layouts-h">
<h2 id="layouts-h">Layouts</h2>
<p>Each changed struct's bytes, old beside new, {{.BytesPerRow}} bytes a row, every box as wide as its bytes. Rows that lie inside one member on both sides are left out and say so.</p>
<ul class="legend" aria-label="legend">
{{range .Legend}}<li><span class="{{.Class}}" role="img" aria-label="{{.Name}}"><span>{{.Text}}</span></span> {{.Name}}</li>
{{end}}</ul>
{{range .Pictures}}<figure class="layout" id="{{.ID}}" aria-labelledby="{{.ID}}-c">
<figcaption id="{{.ID}}-c">struct {{.Name}}</figcaption>
<div class="grid">
<div class="row head"><div class="off">offset</div><div class="lanehead">{{template "side" .Old}}</div><div class="lanehead">{{template "side" .New}}</div></div>
{{range .Rows}}<div class="row{{if .Elided}} elided{{end}}"><div class="off">{{.Offset}}</div>{{template "lane" .Old}}{{template "lane" .New}}</div>
{{end}}</div>
{{if .Dropped}}<p class="dropped">{{.Dropped}} more rows not drawn (a picture draws at most ` + "512" + ` rows).</p>{{end}}
</figure>
{{end}}</section>{{end}}
</main>
</body>
</html>
{{define "side"}}{{.Label}}{{if .Absent}}: not described{{else}}: {{.Size}} bytes{{end}}{{end}}
{{define "lane"}}<div class="lane"{{if .Label}} role="group" aria-label="{{.Label}}"{{end}}>{{if .Note}}<span class="note">{{.Note}}</span>{{end}}{{range .Boxes}}<span class="{{.Class}}" role="img" aria-label="{{.Name}}" title="{{.Name}}" data-bytes="{{.Bytes}}" style="width: {{.Width}}%"><span>{{.Text}}</span></span>{{end}}</div>{{end}}
{{define "fact"}}<li class="fact-item d{{.Depth}}"><div class="fact g-{{.Grade}}" id="{{.ID}}" tabindex="0" role="group" aria-label="{{.Label}}">{{if .Depth}}<span aria-hidden="true">→ </span>{{end}}<span class="badge">{{.Grade}}</span> <code class="kind">{{.Kind}}</code> <span class="subject">{{.Subject}}</span>{{if .Change}} <span class="change">{{.Change}}</span>{{end}}{{if .Detail}} <span class="detail">({{.Detail}})</span>{{end}}{{if .Layout}} <a href="#{{.Layout}}">layout of {{.LName}}</a>{{end}}</div>
{{if .Cons}}<ul class="facts">{{range .Cons}}{{template "fact" .}}{{end}}</ul>{{end}}</li>
{{end}}`

// style: colours are never alone: each grade has its own pattern and
// border as well as its word, and every text sits on a plain background
// with a contrast of at least 4.5:1 (the browser test runs axe-core).
const style = `
body { font-family: "DejaVu Sans", Verdana, sans-serif; color: #111; background: #fff; margin: 1.5em auto; max-width: 1200px; padding: 0 1em; line-height: 1.4; }
h1 { font-size: 1.5em; margin: 0 0 .3em; }
.side { margin: .1em 0; color: #333; overflow-wrap: anywhere; }
code, .off, .box { font-family: "DejaVu Sans Mono", monospace; }
.badge { display: inline-block; font-weight: bold; text-transform: uppercase; font-size: .8em; padding: 0 .4em; border: 1px solid #111; background: #fff; color: #111; }
.g-incompatible > .badge { background: #a40000; color: #fff; border-color: #a40000; }
.g-compatible > .badge { background: #6b4200; color: #fff; border-color: #6b4200; }
.g-informational > .badge { background: #0b4f8a; color: #fff; border-color: #0b4f8a; }
.verdict { font-size: 1.1em; padding: .5em; border: 2px solid #111; }
ul.facts { list-style: none; padding-left: 0; margin: .2em 0; }
ul.facts ul.facts { padding-left: 2em; }
.fact { padding: .2em .4em; margin: .1em 0; border-left: 6px solid #777; overflow-wrap: anywhere; }
.fact.g-incompatible { border-left: 6px double #a40000; }
.fact.g-compatible { border-left: 6px dashed #6b4200; }
.fact.g-informational { border-left: 6px dotted #0b4f8a; }
.fact:focus, .verdict:focus { outline: 3px solid #111; outline-offset: 2px; background: #ffffe0; }
.detail { color: #333; }
a { color: #0645ad; }
figure.layout { margin: 1.5em 0; }
figcaption { font-weight: bold; font-family: "DejaVu Sans Mono", monospace; margin-bottom: .3em; }
.grid { border: 1px solid #555; }
.row { display: grid; grid-template-columns: 6em minmax(0, 1fr) minmax(0, 1fr); border-top: 1px solid #ccc; }
.row.head { font-weight: bold; border-top: none; }
.off { text-align: right; padding-right: .5em; color: #333; font-size: .85em; align-self: center; }
.lane, .lanehead { display: flex; min-width: 0; margin: 2px .5em; overflow: hidden; }
.lanehead { display: block; overflow-wrap: anywhere; }
.note { font-style: italic; color: #333; font-size: .85em; padding: .3em 0; overflow-wrap: anywhere; }
.box { box-sizing: border-box; flex: none; height: 2.4em; overflow: hidden; white-space: nowrap; font-size: 11px; padding: 1px; border: 1px solid #333; display: flex; align-items: center; }
.box > span { background: #fff; color: #111; padding: 0 1px; overflow: hidden; text-overflow: clip; }
.field.g-none { background: #e4e8ec; }
.g-incompatible.box { background: repeating-linear-gradient(45deg, #c94040 0 3px, #f4d0d0 3px 7px); border: 2px solid #a40000; }
.g-compatible.box { background: repeating-linear-gradient(90deg, #c08a1e 0 2px, #fbecc8 2px 6px); border: 2px dashed #6b4200; }
.g-informational.box { background: radial-gradient(#0b4f8a 1.2px, #dce9f5 1.4px) 0 0 / 5px 5px; border: 2px dotted #0b4f8a; }
.moved.box { border-bottom: 4px double #111; }
.opaque.box { background: repeating-linear-gradient(0deg, #888 0 1px, #f0f0f0 1px 4px); }
.hole.box { background: repeating-linear-gradient(-45deg, #aaa 0 1px, #fff 1px 5px); border: 1px dashed #555; }
.pad.box { background: repeating-linear-gradient(45deg, #aaa 0 1px, transparent 1px 5px), repeating-linear-gradient(-45deg, #aaa 0 1px, #fff 1px 5px); border: 1px dashed #555; }
ul.legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .3em 1.5em; font-size: .9em; }
ul.legend li { display: flex; align-items: center; gap: .4em; max-width: 36em; }
ul.legend .box { width: 5em; }
.dropped { font-style: italic; }
table.matrix { border-collapse: collapse; margin: .5em 0; }
table.matrix th, table.matrix td { border: 1px solid #555; padding: .3em .5em; text-align: left; vertical-align: top; }
table.matrix th { background: #e4e8ec; font-family: "DejaVu Sans Mono", monospace; font-weight: bold; }
td.cell.g-incompatible { border: 3px double #a40000; background: repeating-linear-gradient(45deg, #f4d0d0 0 3px, #fff 3px 7px); }
td.cell.g-informational { border: 2px dotted #0b4f8a; }
td.cell.g-none { border: 1px solid #555; }
td.cell a { background: #fff; }
a.note-ref:focus { outline: 3px solid #111; outline-offset: 1px; }
`
