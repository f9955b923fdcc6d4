// Package report presents a outcome.Result as a terminal summary, markdown,
// JSON, or a self-contained HTML page, for verify and the dry-run diff.
package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// Modes of a report.
const (
	ModeVerify = "verify"
	ModeDiff   = "diff"
)

// Report is what verify and diff print, in Summary's words (new, changed,
// stale). JSON names stay as scripts read them: "missing" holds the new items,
// "extra" the stale and other items.
type Report struct {
	Mode string `json:"mode"`
	// OK: the table matches the source (verify), or a run would change nothing
	// (diff).
	OK bool `json:"ok"`
	// Run says when, against what and by which pg2dynamo; nil when the caller
	// did not say.
	Run *Run `json:"run,omitempty"`
	*outcome.Result
	// Totals sums Entities.
	Totals outcome.EntityCounts `json:"totals"`
	// Summary gives the exact counts in the report's words.
	Summary Summary `json:"summary"`
	// Cost of the changes and of a run writing every derived item (diff).
	Cost *Cost `json:"cost,omitempty"`
	// Applied is what the run wrote before the check (--changes-only's writes,
	// --prune's deletes); set by the caller, else nil.
	Applied *Applied `json:"applied,omitempty"`
}

// Summary counts a report's items in every form's words: New items are derived
// but not in the table; Changed in both with other content; Stale in the table,
// of a mapped type, no longer derived; Unchanged in the table as derived; Other
// in the table of no mapped type (another writer's). Duplicates are keys
// derived more than once; InFlight items differed because a follow changed them
// during the check. All counts are exact.
type Summary struct {
	New        int64 `json:"new"`
	Changed    int64 `json:"changed"`
	Stale      int64 `json:"stale"`
	Unchanged  int64 `json:"unchanged"`
	Other      int64 `json:"other"`
	Duplicates int64 `json:"duplicates"`
	InFlight   int64 `json:"in_flight"`
}

// Cost prices a diff on demand at PricePerMillion US dollars per million write
// units (transform.WriteUnits): a full run putting every derived item (Items,
// WriteUnits, Dollars), the changes alone (Change*), and deleting stale items
// (Stale*, what --prune deletes). Beside them, the same items via ImportTable
// at ImportPricePerGB per GB of uncompressed export DynamoDB JSON.
type Cost struct {
	PricePerMillion float64 `json:"price_per_million"`
	Items           int64   `json:"items"`
	WriteUnits      int64   `json:"write_units"`
	Dollars         float64 `json:"dollars"`

	ChangeItems      int64   `json:"change_items"`
	ChangeWriteUnits int64   `json:"change_write_units"`
	ChangeDollars    float64 `json:"change_dollars"`
	StaleItems       int64   `json:"stale_items"`
	StaleWriteUnits  int64   `json:"stale_write_units"`
	StaleDollars     float64 `json:"stale_dollars"`
	// ExportBytes is the items' DynamoDB JSON (pg2dynamo export).
	ExportBytes      int64   `json:"export_bytes,omitempty"`
	ImportPricePerGB float64 `json:"import_price_per_gb,omitempty"`
	ImportDollars    float64 `json:"import_dollars,omitempty"`
}

// New builds res's report in mode (ModeVerify, ModeDiff, ModeChanges); price is
// ModeDiff's price per million write units. A ModeChanges report is OK when the
// table matched once the differences were applied (outcome.Result.AppliedOK).
func New(mode string, res *outcome.Result, price float64) *Report {
	r := &Report{Mode: mode, Result: res}
	t := &r.Totals
	t.Entity = "total"
	for _, e := range res.Entities {
		t.SourceRows += e.SourceRows
		t.Rows += e.Rows
		t.Rejected += e.Rejected
		t.Expected += e.Expected
		t.Derived += e.Derived
		t.Duplicates += e.Duplicates
		t.Table += e.Table
		t.Missing += e.Missing
		t.Changed += e.Changed
		t.Unchanged += e.Unchanged
		t.Stale += e.Stale
		t.InFlight += e.InFlight
		t.WriteUnits += e.WriteUnits
		t.ChangeWriteUnits += e.ChangeWriteUnits
		t.StaleWriteUnits += e.StaleWriteUnits
		t.ExportBytes += e.ExportBytes
	}
	c := res.Counts
	r.Summary = Summary{New: c.Missing.Total, Changed: c.Changed.Total, Stale: res.Stale, Unchanged: t.Unchanged,
		Other: res.Unmanaged, Duplicates: c.Duplicates.Total, InFlight: c.InFlight.Total}
	if mode == ModeDiff {
		r.OK = t.Missing == 0 && t.Changed == 0 && res.Stale == 0 && !res.TableMissing
		dollars := func(wu int64) float64 { return float64(wu) * price / 1e6 }
		r.Cost = &Cost{PricePerMillion: price, Items: t.Derived + t.Duplicates, WriteUnits: t.WriteUnits, Dollars: dollars(t.WriteUnits),
			ChangeItems: t.Missing + t.Changed, ChangeWriteUnits: t.ChangeWriteUnits, ChangeDollars: dollars(t.ChangeWriteUnits),
			// Retired types' stale items (verify.Options.Retired) belong to no
			// entity; res's counts hold them.
			StaleItems: res.Stale, StaleWriteUnits: t.StaleWriteUnits + res.RetiredWriteUnits, StaleDollars: dollars(t.StaleWriteUnits + res.RetiredWriteUnits),
			ExportBytes: t.ExportBytes}
	} else if mode == ModeChanges {
		r.OK = res.AppliedOK()
	} else {
		r.OK = res.OK()
	}
	return r
}

// heldKeys says how many new items' keys other types hold (outcome.Result.Held),
// which applying rejects; "" for none.
func (r *Report) heldKeys() string {
	var n int64
	var by []string
	for _, typ := range slices.Sorted(maps.Keys(r.Held)) {
		n += r.Held[typ]
		by = append(by, fmt.Sprintf("%s %d", typ, r.Held[typ]))
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s held by items of other types (%s): applying it rejects them (duplicate primary key), and its check fails",
		Count(n, "new item's key is", "new items' keys are"), strings.Join(by, ", "))
}

// PriceImport prices the diff's items via ImportTable at perGB US dollars per
// GB of DynamoDB JSON.
func (r *Report) PriceImport(perGB float64) {
	if r.Cost == nil || r.Cost.ExportBytes == 0 {
		return
	}
	r.Cost.ImportPricePerGB = perGB
	r.Cost.ImportDollars = float64(r.Cost.ExportBytes) / 1e9 * perGB
}

// Formats.
const (
	FormatText     = "text"
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
)

// Render writes r as text or markdown (limit keys per list) or JSON (every key,
// WriteJSON). Counts are exact; a list longer than the Result keeps says how
// many it lists. It fails on a write error or an unreadable list file.
func Render(w io.Writer, r *Report, format string, limit int) error {
	switch format {
	case FormatJSON:
		return WriteJSON(w, r)
	case FormatText, FormatMarkdown:
		var b strings.Builder
		if err := writeTables(&b, r, format == FormatMarkdown, limit); err != nil {
			return err
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	return fmt.Errorf("unknown format %q: expected text, markdown or json", format)
}

// jsonSkeleton is a Report without its lists: these nil fields shadow the
// Result's (encoding/json prefers the shallower field) and are omitted, so
// WriteJSON can stream the lists after.
type jsonSkeleton struct {
	*Report
	Missing    *struct{} `json:"missing,omitempty"`
	Extra      *struct{} `json:"extra,omitempty"`
	Duplicates *struct{} `json:"duplicates,omitempty"`
	Changed    *struct{} `json:"changed,omitempty"`
	InFlight   *struct{} `json:"in_flight,omitempty"`
	Written    *struct{} `json:"written,omitempty"`
	Deleted    *struct{} `json:"deleted,omitempty"`
	Unapplied  *struct{} `json:"unapplied,omitempty"`
}

// WriteJSON writes r as json.Encoder with SetIndent("", " ") would, but with
// the lists (missing, extra, duplicates, changed, in_flight, then Applied's)
// last, streamed one entry at a time. It decodes into a Report, except
// Applied's lists.
func WriteJSON(w io.Writer, r *Report) error {
	head, err := json.MarshalIndent(jsonSkeleton{Report: r}, "", "  ")
	if err != nil {
		return err
	}
	head = bytes.TrimSuffix(head, []byte("\n}"))
	bw := bufio.NewWriter(w)
	bw.Write(head)
	lists := []struct {
		name string
		l    interface {
			WriteJSON(io.Writer, string, string) error
		}
	}{{"missing", r.Missing}, {"extra", r.Extra}, {"duplicates", r.Duplicates}, {"changed", r.Changed}, {"in_flight", r.InFlight}}
	if a := r.Applied; a != nil && a.Applied != nil {
		lists = append(lists, []struct {
			name string
			l    interface {
				WriteJSON(io.Writer, string, string) error
			}
		}{{"written", a.Put}, {"deleted", a.Delete}, {"unapplied", a.Unapplied}}...)
	}
	for _, l := range lists {
		fmt.Fprintf(bw, ",\n  %q: ", l.name)
		if err := l.l.WriteJSON(bw, "  ", "  "); err != nil {
			return err
		}
	}
	bw.WriteString("\n}\n")
	return bw.Flush()
}

// Headline is the one-line verdict, in Summary's words.
func (r *Report) Headline() string {
	t, n := r.Totals, r.Summary
	if r.Mode == ModeChanges {
		return r.changesHeadline()
	}
	if r.Mode == ModeDiff {
		s := fmt.Sprintf("diff of table %s: %d new, %d changed, %d unchanged, %d stale", r.Table, n.New, n.Changed, n.Unchanged, n.Stale)
		if n.Other > 0 {
			s += fmt.Sprintf(" (%d other items not of a mapped type)", n.Other)
		}
		if r.TableMissing {
			s += fmt.Sprintf("; table %s does not exist: every item is new", r.Table)
		}
		if held := r.heldKeys(); held != "" {
			s += "; " + held
		}
		return s
	}
	if r.TableMissing {
		return fmt.Sprintf("verify FAILED: table %s does not exist", r.Table)
	}
	verdict := "PASSED"
	if !r.OK {
		verdict = "FAILED"
	}
	bad := 0
	for _, p := range r.Patterns {
		if !p.OK {
			bad++
		}
	}
	s := fmt.Sprintf("verify %s: table %s, %d items expected, %d new, %d changed, %d stale", verdict, r.Table, t.Expected,
		n.New, n.Changed, n.Stale)
	if t.Rejected > 0 {
		s += fmt.Sprintf(" (%s rejected: not in the table, not expected)", Count(t.Rejected, "source row", "source rows"))
	}
	if n.Other > 0 {
		s += fmt.Sprintf(" (%d other items not of a mapped type, not checked)", n.Other)
	}
	if n := countProblems(r.Entities); n > 0 {
		s += ", " + Count(int64(n), "entity", "entities") + " whose counts disagree"
	}
	if n := n.Duplicates; n > 0 {
		s += ", " + Count(n, "key", "keys") + " derived more than once"
	}
	s += fmt.Sprintf("; %d access-pattern queries, %d wrong", len(r.Patterns), bad)
	if n := n.InFlight; n > 0 {
		s += fmt.Sprintf("; %s changed by the follow while the check ran (lag, not a mismatch)", Count(n, "item", "items"))
	}
	return s
}

func countProblems(es []outcome.EntityCounts) int {
	n := 0
	for _, e := range es {
		if e.CountProblem != "" {
			n++
		}
	}
	return n
}

// tableWriter writes a report's tables as text or markdown (md) into b, at most
// limit entries a list.
type tableWriter struct {
	b     *strings.Builder
	md    bool
	limit int
}

// writeTables writes r into b: headline, counts per entity, lists (limit
// entries each), access patterns and cost. It fails when a list cannot be read
// back.
func writeTables(b *strings.Builder, r *Report, md bool, limit int) error {
	w := &tableWriter{b: b, md: md, limit: limit}
	if md {
		fmt.Fprintf(b, "# %s\n", r.Headline())
	} else {
		fmt.Fprintln(b, r.Headline())
	}
	if r.Applied != nil {
		w.applied(r)
	}
	w.entities(r)
	if err := w.itemLists(r); err != nil {
		return err
	}
	if len(r.Patterns) > 0 {
		w.patterns(r.Patterns)
	}
	if r.Cost != nil {
		w.cost(r.Cost)
	}
	return nil
}

func (w *tableWriter) heading(s string) {
	if w.md {
		fmt.Fprintf(w.b, "\n## %s\n\n", s)
	} else {
		fmt.Fprintf(w.b, "\n%s\n", s)
	}
}

func (w *tableWriter) table(head []string, rows [][]string) { table(w.b, w.md, head, rows) }

// The report's words for an item (Summary), and what each means.
const (
	meaningNew       = "derived from the source, not in the table"
	meaningChanged   = "in the table and derived from the source, with other content"
	meaningStale     = "in the table, of a mapped type, no longer derived from the source"
	meaningUnchanged = "in the table as derived from the source"
	meaningOther     = "in the table, of no type the mapping declares: another writer's, not compared"
)

// entities writes the counts per entity and total, what new, changed and stale
// mean when present, then entities whose counts disagree.
func (w *tableWriter) entities(r *Report) {
	diff := r.Mode == ModeDiff || r.Mode == ModeChanges
	head := []string{"entity", "type", "source rows", "rejected", "expected", "in table", "new", "changed", "unchanged", "stale"}
	if diff {
		head = append(head, "write units (all)", "write units (changes)")
	}
	var rows [][]string
	for _, e := range append(r.Entities, r.Totals) {
		row := []string{e.Entity, e.Type, num(e.SourceRows), num(e.Rejected), num(e.Expected), num(e.Table), num(e.Missing), num(e.Changed), num(e.Unchanged), num(e.Stale)}
		if diff {
			row = append(row, num(e.WriteUnits), num(e.ChangeWriteUnits))
		}
		rows = append(rows, row)
	}
	w.heading("Items per entity")
	w.table(head, rows)
	if n := r.Summary; n.New+n.Changed+n.Stale > 0 {
		fmt.Fprintf(w.b, "\nnew: %s; changed: %s; stale: %s.\n", meaningNew, meaningChanged, meaningStale)
	}
	if countProblems(r.Entities) > 0 {
		w.heading("Counts that disagree (expected = (source rows − rejected) × items a row)")
		var rows [][]string
		for _, e := range r.Entities {
			if e.CountProblem != "" {
				rows = append(rows, []string{e.Entity, e.CountProblem})
			}
		}
		w.table([]string{"entity", "problem"}, rows)
	}
}

// staleTitle names Result.Extra's list: stale items and any other items.
func staleTitle(r *Report) string {
	switch {
	case r.Summary.Other == 0:
		return "Stale items"
	case r.Summary.Stale == 0:
		return "Other items, of no mapped type"
	}
	return "Stale items, and other items of no mapped type"
}

// Titles of the lists of duplicate keys and of items in flight.
const (
	titleDuplicates = "Keys the source derives more than once, not rejected"
	titleInFlight   = "Items in flight: changed after the check's snapshot by the follow, while the check ran"
)

// itemLists writes the new, changed, stale, duplicate and in-flight lists, each
// even when another fails; errors are joined.
func (w *tableWriter) itemLists(r *Report) error {
	c := r.Counts
	newTitle, stale := "New items", staleTitle(r)
	if r.Mode == ModeChanges {
		newTitle, stale = changesTitle(r, "new"), changesTitle(r, "stale")
	}
	err := errors.Join(w.itemList(newTitle, r.Missing, c.Missing), w.changed(r),
		w.itemList(stale, r.Extra, c.Extra),
		w.itemList(titleDuplicates, r.Duplicates, c.Duplicates),
		w.itemList(titleInFlight, r.InFlight, c.InFlight))
	for _, l := range appliedLists(r) {
		err = errors.Join(err, w.itemList(l.title, l.list, l.count))
	}
	return err
}

// applied writes what the run wrote before the check (Report.Applied).
func (w *tableWriter) applied(r *Report) {
	w.heading(appliedTitle(r.Applied))
	var rows [][]string
	for _, row := range appliedRows(r) {
		rows = append(rows, row[:])
	}
	w.table([]string{"what", "count"}, rows)
}

// itemList writes list l's first keys under title (count its length), unless
// empty.
func (w *tableWriter) itemList(title string, l outcome.List[outcome.ItemRef], count outcome.ListCount) error {
	if count.Total == 0 {
		return nil
	}
	w.heading(fmt.Sprintf("%s (%d)", title, count.Total))
	refs, err := l.Head(w.limit)
	if err != nil {
		return err
	}
	var rows [][]string
	for _, ref := range refs {
		rows = append(rows, []string{ref.PK, ref.SK, ref.Type})
	}
	if int64(len(refs)) < count.Total {
		rows = append(rows, []string{more(count, len(refs)), "", ""})
	}
	w.table([]string{"partition key", "sort key", "type"}, rows)
	return nil
}

// Column heads of an attribute's two sides.
const (
	headInTable = "in the table"
	headSource  = "derived from the source"
)

// changed writes the first changed items, a differing attribute a row, values
// typed ("absent" for a missing side).
func (w *tableWriter) changed(r *Report) error {
	c := r.Counts
	if c.Changed.Total == 0 {
		return nil
	}
	title := "Changed items"
	if r.Mode == ModeChanges {
		title = changesTitle(r, "changed")
	}
	w.heading(fmt.Sprintf("%s (%d)", title, c.Changed.Total))
	changed, err := r.Changed.Head(w.limit)
	if err != nil {
		return err
	}
	var rows [][]string
	for _, ci := range changed {
		for _, ch := range ci.Changes {
			rows = append(rows, []string{ci.PK, ci.SK, ch.Attribute, parseValue(ch.Before).String(), parseValue(ch.After).String()})
		}
	}
	if int64(len(changed)) < c.Changed.Total {
		rows = append(rows, []string{more(c.Changed, len(changed)), "", "", "", ""})
	}
	w.table([]string{"partition key", "sort key", "attribute", headInTable, headSource}, rows)
	return nil
}

// costRow is a cost line: Key "changes", "stale" or "full"; Prefix its fields'
// prefix in Cost's JSON.
type costRow struct {
	Key, Prefix, Label, Items, WriteUnits, Dollars string
}

// costRows are the changes, stale deletes (if any) and a full run.
func costRows(c *Cost) []costRow {
	row := func(key, prefix, label string, items, wu int64, d float64) costRow {
		return costRow{key, prefix, label, num(items), num(wu), dollars(d)}
	}
	rows := []costRow{row("changes", "change_", "the changes: put the new and changed items", c.ChangeItems, c.ChangeWriteUnits, c.ChangeDollars)}
	if c.StaleItems > 0 {
		rows = append(rows, row("stale", "stale_", "delete the stale items (migrate --prune)", c.StaleItems, c.StaleWriteUnits, c.StaleDollars))
	}
	return append(rows, row("full", "", "a full run: put every item (migrate)", c.Items, c.WriteUnits, c.Dollars))
}

// dollars formats d to the cent, or two significant digits below 10 cents:
// "$12.50", "$0.063", "$0.0000044".
func dollars(d float64) string {
	places := 2
	for x := d; x > 0 && x < 0.1 && places < 12; x *= 10 {
		places++
	}
	return fmt.Sprintf("$%.*f", places, d)
}

// importNote prices the export + import path; "" without export bytes.
func importNote(c *Cost) string {
	if c.ExportBytes == 0 {
		return ""
	}
	return fmt.Sprintf("export + import (ImportTable, into a new table): %.3f GB of DynamoDB JSON at $%.3f per GB: $%.4f, no write units",
		float64(c.ExportBytes)/1e9, c.ImportPricePerGB, c.ImportDollars)
}

// cost writes a diff's costs (costRows), then the export + import path.
func (w *tableWriter) cost(c *Cost) {
	w.heading("Cost")
	var rows [][]string
	for _, r := range costRows(c) {
		rows = append(rows, []string{r.Label, r.Items, r.WriteUnits, r.Dollars})
	}
	w.table([]string{"writes", "items", "write units", fmt.Sprintf("on demand at $%.3f per million", c.PricePerMillion)}, rows)
	if n := importNote(c); n != "" {
		fmt.Fprintln(w.b, n)
	}
}

// more is a truncated list's last row: how many are left out, and how many the
// JSON report holds.
func more(count outcome.ListCount, shown int) string {
	if count.Truncated() {
		return fmt.Sprintf("… %d more; --format json lists the first %d of %d", count.Total-int64(shown), count.Listed, count.Total)
	}
	return fmt.Sprintf("… %d more (all in --format json)", count.Total-int64(shown))
}

// patternSummary is one access pattern's queries run, wrong count, note and
// first wrong answers.
type patternSummary struct {
	index         string
	queries, bad  int
	note          string
	firstProblems []outcome.PatternResult
}

// patterns writes a row per access pattern (first-seen order), then each one's
// first wrong answers, at most limit (at least one).
func (w *tableWriter) patterns(results []outcome.PatternResult) {
	w.heading("Access patterns")
	order, per := summarizePatterns(results, max(w.limit, 1))
	var rows [][]string
	for _, name := range order {
		a := per[name]
		status := "ok"
		if a.note != "" {
			status = "ok, " + a.note
		}
		if a.bad > 0 {
			status = fmt.Sprintf("%d WRONG", a.bad)
		}
		rows = append(rows, []string{name, a.index, num(int64(a.queries)), status})
	}
	w.table([]string{"pattern", "index", "queries (sampled parameters)", "result"}, rows)
	var bad [][]string
	for _, name := range order {
		for _, p := range per[name].firstProblems {
			bad = append(bad, []string{p.Pattern, params(p.Params), num(int64(p.Want)), num(int64(p.Got)), p.Problem})
		}
	}
	if len(bad) > 0 {
		w.heading("Wrong access-pattern answers")
		w.table([]string{"pattern", "parameters", "want", "got", "problem"}, bad)
	}
}

// summarizePatterns sums results by pattern, keeping each one's first keep
// wrong answers; order is first-seen.
func summarizePatterns(results []outcome.PatternResult, keep int) (order []string, per map[string]*patternSummary) {
	per = map[string]*patternSummary{}
	for _, p := range results {
		a := per[p.Pattern]
		if a == nil {
			a = &patternSummary{index: p.Index}
			per[p.Pattern] = a
			order = append(order, p.Pattern)
		}
		if !p.NotRun {
			a.queries++
		}
		if p.Note != "" {
			a.note = p.Note
		}
		if !p.OK {
			a.bad++
			if len(a.firstProblems) < keep {
				a.firstProblems = append(a.firstProblems, p)
			}
		}
	}
	return order, per
}

func num(n int64) string { return fmt.Sprint(n) }

// Count is "1 entity" or "3 entities": n and the noun that fits it.
func Count[N ~int | ~int64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func params(p map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(p)) {
		parts = append(parts, k+"="+p[k])
	}
	return strings.Join(parts, " ")
}

func table(b *strings.Builder, md bool, head []string, rows [][]string) {
	if md {
		esc := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") }
		fmt.Fprintf(b, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
		for _, r := range rows {
			cells := make([]string, len(r))
			for i, c := range r {
				cells[i] = esc(c)
			}
			fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
		}
		return
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}
