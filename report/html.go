package report

import (
	"bytes"
	"encoding/json"
	"html/template"
	"io"
)

// HTML writes r as one self-contained page: no network, styles and script
// inline. The report's JSON is embedded and a small script draws the
// summary, the counts per entity, the cost estimate and, for the sampled
// changed items, their before and after side by side.
func HTML(w io.Writer, r *Report) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	err = page.Execute(&b, map[string]any{"Title": r.Headline(), "JSON": template.JS(data)})
	if err != nil {
		return err
	}
	_, err = w.Write(b.Bytes())
	return err
}

var page = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>{{.Title}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.ok { color: #176f2c; } .bad { color: #b3261e; }
pre { margin: 0; white-space: pre-wrap; word-break: break-all; max-width: 40em; }
.changed { background: #fff3cd; }
</style>
</head>
<body>
<h1 id="headline"></h1>
<div id="content"></div>
<script id="report-data" type="application/json">{{.JSON}}</script>
<script>
"use strict";
const r = JSON.parse(document.getElementById("report-data").textContent);
const el = (tag, attrs, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return e;
};
const content = document.getElementById("content");
const h = document.getElementById("headline");
h.textContent = {{.Title}};
h.className = r.ok ? "ok" : "bad";
const diff = r.mode === "diff";
const cols = [["entity", "entity"], ["type", "type"], ["source rows", "source_rows"], ["rejected", "rejected"],
  ["expected", "expected"], ["in table", "table"], [diff ? "new" : "missing", "missing"],
  ["changed", "changed"], ["unchanged", "unchanged"], ["stale", "stale"]];
if (diff) cols.push(["write units", "write_units"]);
const counts = el("table", {id: "counts"}, el("tr", {}, ...cols.map(([t]) => el("th", {}, t))));
for (const e of [...r.entities, r.totals]) {
  counts.append(el("tr", {"data-entity": e.entity}, ...cols.map(([, k]) =>
    el("td", typeof e[k] === "number" ? {class: "n", "data-count": k} : {}, e[k]))));
}
content.append(el("h2", {}, "Items per entity"), counts);
const disagree = r.entities.filter(e => e.count_problem);
if (disagree.length) {
  const t = el("table", {id: "count-problems"}, el("tr", {}, el("th", {}, "entity"), el("th", {}, "problem")));
  for (const e of disagree) t.append(el("tr", {}, el("td", {}, e.entity), el("td", {class: "bad"}, e.count_problem)));
  content.append(el("h2", {}, "Counts that disagree"), t);
}
if (r.cost) {
  content.append(el("h2", {}, "Cost of the run"),
    el("p", {id: "cost"}, el("span", {"data-cost": "write_units"}, r.cost.write_units), " write units; on demand at $",
      r.cost.price_per_million.toFixed(3), " per million write request units: $",
      el("span", {"data-cost": "dollars"}, r.cost.dollars.toFixed(4))));
}
const refs = (title, list, id) => {
  if (!list || !list.length) return;
  const t = el("table", {id}, el("tr", {}, el("th", {}, "partition key"), el("th", {}, "sort key"), el("th", {}, "type")));
  for (const x of list.slice(0, 100)) t.append(el("tr", {}, el("td", {}, x.pk), el("td", {}, x.sk), el("td", {}, x.type || "")));
  content.append(el("h2", {}, title + " (" + list.length + ")"), t);
};
refs(diff ? "New items" : "Missing items", r.missing, "missing");
refs(diff ? "Items the source no longer produces" : "Extra items", r.extra, "extra");
refs("Keys the source derives more than once, not rejected", r.duplicates, "duplicates");
if (r.changed && r.changed.length) {
  content.append(el("h2", {}, (diff ? "Changed items" : "Differing items") + " (" + r.changed.length + ")"));
  for (const c of r.changed.filter(c => c.before)) {
    const names = new Set(c.changes.map(x => x.attribute));
    const side = (item) => {
      const t = el("table", {});
      for (const [k, v] of Object.entries(item || {}).sort()) {
        t.append(el("tr", names.has(k) ? {class: "changed"} : {}, el("td", {}, k), el("td", {}, el("pre", {}, JSON.stringify(v)))));
      }
      return t;
    };
    content.append(el("h3", {"data-changed": c.pk + " " + c.sk}, c.pk + " / " + c.sk),
      el("table", {class: "side-by-side"}, el("tr", {}, el("th", {}, "table (before)"), el("th", {}, "source (after)")),
        el("tr", {}, el("td", {}, side(c.before)), el("td", {}, side(c.after)))));
  }
}
if (r.patterns && r.patterns.length) {
  const t = el("table", {id: "patterns"}, el("tr", {}, ...["pattern", "index", "parameters", "want", "got", "result"].map(x => el("th", {}, x))));
  for (const p of r.patterns) {
    t.append(el("tr", {}, el("td", {}, p.pattern), el("td", {}, p.index),
      el("td", {}, Object.entries(p.params).map(([k, v]) => k + "=" + v).join(" ")),
      el("td", {class: "n"}, p.want), el("td", {class: "n"}, p.got),
      el("td", {class: p.ok ? "ok" : "bad"}, p.ok ? (p.note ? "ok, " + p.note : "ok") : "WRONG: " + p.problem)));
  }
  content.append(el("h2", {}, "Access patterns"), t);
}
</script>
</body>
</html>
`))
