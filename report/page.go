package report

import "html/template"

// pageTemplate renders a page. Its closing script only folds lists over
// foldAbove rows to their first foldTo and marks the page "js"; data-*
// attributes name cells by Summary's and EntityCounts' JSON names, for tests
// and scripts.
var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>{{.Headline}}</title>
<style>` + pageStyle + `</style>
</head>
<body>
<header class="verdict {{.Verdict}}" id="verdict" data-verdict="{{.Verdict}}">
<p class="kind">{{.Kind}}</p>
<h1 id="headline">{{.Headline}}</h1>
<p class="lead">{{.Lead}}</p>
</header>

<section id="run"><h2>Run</h2>
<dl>{{range .Facts}}<dt>{{.Label}}</dt><dd data-run="{{.Key}}">{{.Value}}</dd>{{end}}</dl>
</section>

{{- with .Applied}}
<section id="applied"><h2>{{$.AppliedTitle}}</h2>
<dl>{{range .}}<dt>{{.Label}}</dt><dd data-applied="{{.Key}}">{{.Value}}</dd>{{end}}</dl>
</section>
{{end}}
<section id="summary"><h2>Items</h2>
<ul class="counts">{{range .Counts}}
<li class="count{{if .Bad}} bad{{end}}"><span class="n" data-summary="{{.Key}}">{{.N}}</span> <span class="word">{{.Word}}</span><span class="meaning">{{.Meaning}}</span></li>{{end}}
</ul>
</section>

<section id="entities"><h2>Items per entity</h2>
<table id="counts">
<thead><tr><th>entity</th><th>type</th><th>source rows</th><th>rejected</th><th>expected</th><th>in table</th><th>new</th><th>changed</th><th>unchanged</th><th>stale</th>{{if .Priced}}<th>write units (all)</th><th>write units (changes)</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}
<tr data-entity="{{.Entity}}"><td>{{.Entity}}</td><td>{{.Type}}</td><td class="n" data-count="source_rows">{{.SourceRows}}</td><td class="n" data-count="rejected">{{.Rejected}}</td><td class="n" data-count="expected">{{.Expected}}</td><td class="n" data-count="table">{{.Table}}</td><td class="n" data-count="new">{{.Missing}}</td><td class="n" data-count="changed">{{.Changed}}</td><td class="n" data-count="unchanged">{{.Unchanged}}</td><td class="n" data-count="stale">{{.Stale}}</td>{{if $.Priced}}<td class="n" data-count="write_units">{{.WriteUnits}}</td><td class="n" data-count="change_write_units">{{.ChangeWriteUnits}}</td>{{end}}</tr>{{end}}
</tbody>
</table>
{{- with .Problems}}
<h3>Counts that disagree</h3>
<p class="meaning">Expected = (source rows − rejected) × items a row; the items derived must number that, with distinct keys.</p>
<table id="count-problems"><thead><tr><th>entity</th><th>problem</th></tr></thead>
<tbody>{{range .}}<tr data-entity="{{.Entity}}"><td>{{.Entity}}</td><td class="bad">{{.CountProblem}}</td></tr>{{end}}</tbody>
</table>
{{- end}}
</section>
{{with .CostRows}}
<section id="cost"><h2>Cost</h2>
<p class="meaning">On demand, at ${{printf "%.3f" $.Cost.PricePerMillion}} per million write request units: each item written or deleted costs a write unit per KB, rounded up, and as much again in each GSI it is in.</p>
<table id="cost-table">
<thead><tr><th>writes</th><th>items</th><th>write units</th><th>dollars</th></tr></thead>
<tbody>{{range .}}
<tr data-cost-row="{{.Key}}"><th scope="row">{{.Label}}</th><td class="n" data-cost="{{.Prefix}}items">{{.Items}}</td><td class="n" data-cost="{{.Prefix}}write_units">{{.WriteUnits}}</td><td class="n" data-cost="{{.Prefix}}dollars">{{.Dollars}}</td></tr>{{end}}
</tbody>
</table>
{{- with $.ImportNote}}
<p id="import">{{.}}</p>{{end}}
</section>
{{- end}}
{{with .New}}{{template "refs" .}}{{end}}
{{with .Changed}}
<section id="changed"><h2 data-list="changed">{{.Title}} ({{.Total}})</h2>
<p class="meaning">` + sentence(meaningChanged) + ` Each item's attributes side by side; <span class="tag">added</span> means the table lacks the attribute, <span class="tag">removed</span> that the source no longer derives it.</p>
{{with .Note}}<p class="listed">{{.}}</p>{{end}}
<div class="items" data-fold>{{range .Items}}
<div class="item" data-changed="{{.PK}} {{.SK}}">
<h3>{{.PK}} <span class="sep">/</span> {{.SK}}{{with .Type}} <span class="type">{{.}}</span>{{end}}</h3>
<table class="attrs">
<thead><tr><th>attribute</th><th>` + headInTable + `</th><th>` + headSource + `</th></tr></thead>
<tbody>{{range .Rows}}{{if .Tag}}
<tr class="differs {{.Tag}}"><th scope="row">{{.Name}} <span class="tag">{{.Tag}}</span></th><td>{{template "value" .Before}}</td><td>{{template "value" .After}}</td></tr>{{else}}
<tr class="same"><th scope="row">{{.Name}}</th><td colspan="2">{{template "value" .Before}} <span class="note">the same on both sides</span></td></tr>{{end}}{{end}}
</tbody>
</table>
{{if not .Whole}}<p class="note">Only the attributes that differ: the report keeps the whole item for the first changed items it finds.</p>{{end}}
</div>{{end}}
</div>
</section>
{{- end}}
{{with .Stale}}{{template "refs" .}}{{end}}
{{range .Others}}{{template "refs" .}}{{end}}
{{with .Patterns}}
<section id="patterns"><h2>Access patterns</h2>
<table id="pattern-table">
<thead><tr><th>pattern</th><th>index</th><th>queries (sampled parameters)</th><th>result</th></tr></thead>
<tbody>{{range .}}<tr data-pattern="{{.Name}}"><td>{{.Name}}</td><td>{{.Index}}</td><td class="n">{{.Queries}}</td><td class="{{if .OK}}ok{{else}}bad{{end}}">{{.Result}}</td></tr>{{end}}</tbody>
</table>
{{- with $.Wrong}}
<h3>Wrong answers</h3>
<table id="wrong" data-fold>
<thead><tr><th>pattern</th><th>parameters</th><th>want</th><th>got</th><th>problem</th></tr></thead>
<tbody>{{range .}}<tr><td>{{.Pattern}}</td><td>{{range $k, $v := .Params}}{{$k}}={{$v}} {{end}}</td><td class="n">{{.Want}}</td><td class="n">{{.Got}}</td><td class="bad">{{.Problem}}</td></tr>{{end}}</tbody>
</table>
{{- end}}
</section>
{{- end}}
<script>` + pageScript + `</script>
</body>
</html>
{{define "refs"}}
<section id="{{.ID}}"><h2 data-list="{{.ID}}">{{.Title}} ({{.Total}})</h2>
{{with .Meaning}}<p class="meaning">{{.}}</p>{{end}}
{{with .Note}}<p class="listed">{{.}}</p>{{end}}
<table class="refs" data-fold>
<thead><tr><th>partition key</th><th>sort key</th><th>type</th></tr></thead>
<tbody>{{range .Refs}}<tr><td>{{.PK}}</td><td>{{.SK}}</td><td>{{.Type}}</td></tr>{{end}}</tbody>
</table>
</section>
{{- end}}
{{define "value"}}
{{- if eq .Kind "absent"}}<span class="absent">absent</span>
{{- else if eq .Kind "scalar"}}<code class="v">{{.Text}}</code> <abbr class="t" title="{{.Title}}">{{.Type}}</abbr>
{{- else if eq .Kind "set"}}<code class="v">{ {{- range $i, $e := .Elems}}{{if $i}}, {{end}}{{$e.Text}}{{end -}} }</code> <abbr class="t" title="{{.Title}}">{{.Type}}</abbr>
{{- else if eq .Kind "list"}}{{if .Elems}}<abbr class="t" title="{{.Title}}">{{.Type}}</abbr><ol class="l" start="0">{{range .Elems}}<li>{{template "value" .}}</li>{{end}}</ol>{{else}}<code class="v">[]</code> <abbr class="t" title="{{.Title}}">{{.Type}}</abbr>{{end}}
{{- else}}{{if .Fields}}<abbr class="t" title="{{.Title}}">{{.Type}}</abbr><table class="m">{{range .Fields}}<tr><th>{{.Name}}</th><td>{{template "value" .Value}}</td></tr>{{end}}</table>{{else}}<code class="v">{}</code> <abbr class="t" title="{{.Title}}">{{.Type}}</abbr>{{end}}
{{- end}}
{{- end}}
`))

// pageStyle is the page's stylesheet, for screen and print.
const pageStyle = `
:root { --ok: #176f2c; --ok-bg: #e6f4ea; --bad: #b3261e; --bad-bg: #fce8e6; --info: #1a4fa0; --info-bg: #e8f0fe; --line: #ccd; --muted: #5f6368; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; padding: 1.5em 2em 3em; max-width: 80em; color: #202124; }
h1 { font-size: 1.35em; margin: .2em 0; } h2 { font-size: 1.15em; margin: 1.8em 0 .4em; } h3 { font-size: 1em; margin: 1.2em 0 .3em; }
.verdict { border-left: .4em solid; padding: .6em 1em; border-radius: .3em; }
.verdict.ok { color: var(--ok); background: var(--ok-bg); } .verdict.bad { color: var(--bad); background: var(--bad-bg); }
.verdict.info { color: var(--info); background: var(--info-bg); }
.verdict .kind { margin: 0; font-size: .85em; text-transform: uppercase; letter-spacing: .05em; }
.verdict .lead { margin: .2em 0 0; color: #202124; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .15em 1em; margin: 0; }
dt { color: var(--muted); } dd { margin: 0; font-family: ui-monospace, Menlo, Consolas, monospace; word-break: break-all; }
ul.counts { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .6em; margin: 0; }
.count { border: 1px solid var(--line); border-radius: .3em; padding: .4em .8em; min-width: 10em; max-width: 18em; }
.count .n { font-size: 1.5em; font-weight: 600; font-variant-numeric: tabular-nums; } .count .word { font-weight: 600; }
.count .meaning { display: block; color: var(--muted); font-size: .85em; } .count.bad { border-color: var(--bad); } .count.bad .n { color: var(--bad); }
table { border-collapse: collapse; margin: .4em 0; }
th, td { border: 1px solid var(--line); padding: .25em .6em; text-align: left; vertical-align: top; }
thead th { background: #f1f3f4; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr[data-entity="total"] td { font-weight: 600; }
.ok { color: var(--ok); } .bad { color: var(--bad); }
p.meaning, p.listed, p.note, span.note { color: var(--muted); margin: .2em 0; } span.note { font-size: .85em; }
.item { margin-bottom: 1em; } .item h3 { font-family: ui-monospace, Menlo, Consolas, monospace; font-weight: 600; }
.type { font-family: system-ui, sans-serif; font-weight: normal; color: var(--muted); }
table.attrs { min-width: 40em; } table.attrs td { width: 45%; }
tr.differs > th, tr.differs > td { background: #fff8e1; }
.tag { font-size: .75em; font-weight: 600; text-transform: uppercase; border: 1px solid currentColor; border-radius: .2em; padding: 0 .3em; margin-left: .3em; color: #8a5a00; }
code.v { font-family: ui-monospace, Menlo, Consolas, monospace; white-space: pre-wrap; word-break: break-all; }
abbr.t { font-size: .75em; color: var(--muted); text-decoration: none; border: 1px solid var(--line); border-radius: .2em; padding: 0 .25em; }
.absent { font-style: italic; color: var(--muted); }
ol.l { margin: .2em 0; padding-left: 2em; } table.m { margin: .2em 0; } table.m th { font-weight: normal; font-family: ui-monospace, Menlo, Consolas, monospace; }
button.unfold { margin: .2em 0 .6em; }
@media print {
  body { font-size: 9pt; padding: 0; max-width: none; }
  .verdict, .count.bad, tr.differs > th, tr.differs > td { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  h2, h3 { break-after: avoid; } tr, .count, .item h3 { break-inside: avoid; }
  thead { display: table-header-group; }
  tr[hidden] { display: table-row !important; } div[hidden] { display: block !important; }
  button.unfold { display: none; }
  abbr.t[title]::after { content: ""; }
}
`

// Folding: a list over foldAbove rows (or changed items) shows its first foldTo
// until unfolded.
const pageScript = `
"use strict";
(() => {
  const foldAbove = 25, foldTo = 10;
  document.documentElement.classList.add("js");
  for (const box of document.querySelectorAll("[data-fold]")) {
    const kids = Array.from(box.tBodies ? box.tBodies[0].rows : box.children);
    if (kids.length <= foldAbove) continue;
    for (const k of kids.slice(foldTo)) k.hidden = true;
    const b = document.createElement("button");
    b.type = "button";
    b.className = "unfold";
    b.textContent = "Show all " + kids.length + " (the first " + foldTo + " shown)";
    b.addEventListener("click", () => { for (const k of kids) k.hidden = false; b.remove(); });
    box.after(b);
  }
})();
`
