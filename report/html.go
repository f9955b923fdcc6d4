package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"html/template"
	"io"

	"github.com/pg2dynamo/pg2dynamo/verify"
)

// htmlListed is how many entries of each list the HTML page shows (and
// embeds); it gives every list's exact count.
const htmlListed = 100

// HTML writes r as one self-contained page: no network, styles and script
// inline. The report's JSON is embedded, with the first htmlListed entries
// of each list of keys and the changed items that keep their whole before
// and after (Options.SampleChanged), and a small script draws the summary, the counts per entity, the
// cost estimate, the lists with their exact counts and, for those changed
// items, their before and after side by side. It fails on a write error,
// or when a list cannot be read back from its temporary file.
func HTML(w io.Writer, r *Report) error {
	page, err := htmlReport(r)
	if err != nil {
		return err
	}
	data, err := json.Marshal(page)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	err = pageTemplate.Execute(&b, map[string]any{"Title": r.Headline(), "JSON": template.JS(data)})
	if err != nil {
		return err
	}
	_, err = w.Write(b.Bytes())
	return err
}

// htmlReport returns a copy of r whose lists are held in memory and cut to
// what the page shows.
func htmlReport(r *Report) (*Report, error) {
	res := *r.Result
	var err error
	head := func(l verify.List[verify.ItemRef]) verify.List[verify.ItemRef] {
		refs, e := l.Head(htmlListed)
		err = errors.Join(err, e)
		return verify.NewList(refs...)
	}
	res.Missing, res.Extra, res.Duplicates, res.InFlight = head(r.Missing), head(r.Extra), head(r.Duplicates), head(r.InFlight)
	var changed []verify.ChangedItem // those the page shows side by side
	for c, e := range r.Changed.All() {
		if e != nil {
			err = errors.Join(err, e)
			break
		}
		if c.Before != nil {
			changed = append(changed, c)
		}
	}
	res.Changed = verify.NewList(changed...)
	page := *r
	page.Result = &res
	return &page, err
}

var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
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
// Every count is the exact one (r.counts); the lists hold the first entries.
const shown = (count, n) => n < count.total ?
  el("p", {class: "listed"}, "the first " + n + " shown; the JSON report lists the first " + count.listed + " of " + count.total) : "";
const refs = (title, list, count, id) => {
  if (!count.total) return;
  const t = el("table", {id}, el("tr", {}, el("th", {}, "partition key"), el("th", {}, "sort key"), el("th", {}, "type")));
  for (const x of list) t.append(el("tr", {}, el("td", {}, x.pk), el("td", {}, x.sk), el("td", {}, x.type || "")));
  content.append(el("h2", {"data-list": id}, title + " (" + count.total + ")"), t, shown(count, list.length));
};
refs(diff ? "New items" : "Missing items", r.missing, r.counts.missing, "missing");
refs(diff ? "Items the source no longer produces" : "Extra items", r.extra, r.counts.extra, "extra");
refs("Keys the source derives more than once, not rejected", r.duplicates, r.counts.duplicates, "duplicates");
refs("Items in flight: changed after the check's snapshot by the follow, while the check ran", r.in_flight, r.counts.in_flight, "in_flight");
if (r.counts.changed.total) {
  content.append(el("h2", {"data-list": "changed"}, (diff ? "Changed items" : "Differing items") + " (" + r.counts.changed.total + ")"),
    el("p", {class: "listed"}, "side by side: the items whose whole before and after the report keeps; the JSON report lists " +
      (r.counts.changed.listed < r.counts.changed.total ? "the first " + r.counts.changed.listed + " of " + r.counts.changed.total : "all of them")));
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
