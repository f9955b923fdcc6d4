package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/tools/reporttest"
)

// run is the metadata the tests' pages carry.
var run = &Run{Time: "2025-01-02T03:04:05Z", Source: "postgres://ada@db:5432/shop", Endpoint: "http://127.0.0.1:8000", Region: "us-east-1",
	Table: "t", Mapping: "shop.yaml", MappingSHA256: strings.Repeat("ab", 32), Version: "v1.2.3"}

// The HTML page is static: rendered in headless Chromium with JavaScript
// disabled, a verify failure and a diff show their headline in the
// verdict's colour (red for the failure, information for the diff), the
// run, Summary's counts, the counts per entity, each list's exact count,
// the diff's cost of the changes beside a full run's, and each changed
// attribute with typed values side by side, "absent" for a missing side.
// The same checks run on the HTML as written, with or without a browser.
func TestHTMLStaticCounts(t *testing.T) {
	for name, tc := range map[string]struct {
		r       func() *Report
		verdict string
		values  []string // the typed values a changed item shows
	}{
		"verify failure": {wrong, "bad", []string{`<code class="v">"a"</code> <abbr class="t" title="string">S</abbr>`,
			`<code class="v">2</code> <abbr class="t" title="number">N</abbr>`, `x <span class="tag">removed</span>`,
			`y <span class="tag">added</span>`, `<span class="absent">absent</span>`,
			`<code class="v">AAE=</code> <abbr class="t" title="binary, in base64">B</abbr>`,
			`<code class="v">{"p", "q"}</code> <abbr class="t" title="string set">SS</abbr>`}},
		"diff": {sample, "info", []string{`<code class="v">"b"</code> <abbr class="t" title="string">S</abbr>`}},
	} {
		t.Run(name, func(t *testing.T) {
			r := tc.r()
			r.Run = run
			var b bytes.Buffer
			if err := HTML(&b, r); err != nil {
				t.Fatal(err)
			}
			// html/template writes quotes in text as &#34;, Chromium as ".
			checkPage(t, "as written", strings.ReplaceAll(b.String(), "&#34;", `"`), r, tc.verdict, tc.values)
			path := filepath.Join(t.TempDir(), "report.html")
			if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			dom, ok := reporttest.RenderStatic(t, path)
			if !ok {
				return
			}
			if strings.Contains(dom, `class="js"`) {
				t.Fatal("the page's script ran: JavaScript was not disabled")
			}
			checkPage(t, "in Chromium without JavaScript", dom, r, tc.verdict, tc.values)
		})
	}
}

// checkPage checks that page shows r's counts; it fails when one is not
// found.
func checkPage(t *testing.T, how, page string, r *Report, verdict string, values []string) {
	t.Helper()
	must := func(what, s string) {
		t.Helper()
		if !strings.Contains(page, s) {
			t.Errorf("%s: the page does not show %s: %q", how, what, s)
		}
	}
	must("the verdict", fmt.Sprintf(`<header class="verdict %s" id="verdict" data-verdict="%s">`, verdict, verdict))
	must("the headline", `<h1 id="headline">`+htmlText(r.Headline())+`</h1>`)
	must("the mapping's hash", `<dd data-run="mapping_sha256">`+run.MappingSHA256+`</dd>`)
	must("the time", `<dd data-run="time">`+run.Time+`</dd>`)
	n := r.Summary
	for key, v := range map[string]int64{"new": n.New, "changed": n.Changed, "stale": n.Stale, "unchanged": n.Unchanged} {
		must("summary count "+key, fmt.Sprintf(`data-summary="%s">%d<`, key, v))
	}
	want := map[string]string{"source_rows": num(r.Totals.SourceRows), "rejected": num(r.Totals.Rejected), "expected": num(r.Totals.Expected),
		"table": num(r.Totals.Table), "new": num(r.Totals.Missing), "changed": num(r.Totals.Changed), "unchanged": num(r.Totals.Unchanged),
		"stale": num(r.Totals.Stale)}
	if r.Mode == ModeDiff || r.Mode == ModeChanges {
		want["write_units"], want["change_write_units"] = num(r.Totals.WriteUnits), num(r.Totals.ChangeWriteUnits)
	}
	if d := gocmp.Diff(want, TotalRow(page)); d != "" {
		t.Errorf("%s: total row (-report +page):\n%s", how, d)
	}
	c := r.Counts
	for list, total := range map[string]int64{"new": c.Missing.Total, "changed": c.Changed.Total, "stale": c.Extra.Total} {
		if got := ListHeading(page, list); got != total {
			t.Errorf("%s: list %s heading says %d, want %d", how, list, got, total)
		}
	}
	if r.Cost != nil {
		for key, v := range map[string]int64{"change_write_units": r.Cost.ChangeWriteUnits, "stale_write_units": r.Cost.StaleWriteUnits,
			"write_units": r.Cost.WriteUnits, "change_items": r.Cost.ChangeItems, "items": r.Cost.Items} {
			must("cost "+key, fmt.Sprintf(`data-cost="%s">%d<`, key, v))
		}
	}
	for _, v := range values {
		must("a typed value", v)
	}
	if strings.Contains(page, `{"S":`) || strings.Contains(page, `{&#34;S&#34;:`) || strings.Contains(page, `{&quot;S&quot;:`) {
		t.Errorf("%s: the page shows raw DynamoDB JSON", how)
	}
}

// TotalRow returns the cells of page's total row by data-count.
func TotalRow(page string) map[string]string {
	m := regexp.MustCompile(`(?s)<tr data-entity="total">(.*?)</tr>`).FindStringSubmatch(page)
	if m == nil {
		return nil
	}
	got := map[string]string{}
	for _, c := range regexp.MustCompile(`data-count="(\w+)">(\d+)<`).FindAllStringSubmatch(m[1], -1) {
		got[c[1]] = c[2]
	}
	return got
}

// ListHeading returns the count page's heading of list id gives; -1 when
// there is none.
func ListHeading(page, id string) int64 {
	m := regexp.MustCompile(`<h2 data-list="` + id + `">[^<]*\((\d+)\)</h2>`).FindStringSubmatch(page)
	if m == nil {
		return -1
	}
	var n int64
	fmt.Sscan(m[1], &n)
	return n
}

// htmlText escapes s as html/template and Chromium write text.
func htmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
