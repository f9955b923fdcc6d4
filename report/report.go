// Package report presents a verify.Result: as a terminal summary, markdown,
// JSON, or a self-contained HTML page (no network) for verify and for the
// dry-run diff.
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

	"github.com/pg2dynamo/pg2dynamo/plan"
	"github.com/pg2dynamo/pg2dynamo/verify"
)

// Modes of a report.
const (
	ModeVerify = "verify"
	ModeDiff   = "diff"
)

// DefaultPricePerMillion is DynamoDB's on-demand price in US dollars per
// million write request units (standard table class, us-east-1).
// https://aws.amazon.com/dynamodb/pricing/on-demand/
const DefaultPricePerMillion = plan.PricePerMillion

// Report is what verify and diff print.
type Report struct {
	Mode string `json:"mode"`
	// OK is true when the table matches the source (verify), or when a run
	// would change nothing (diff).
	OK bool `json:"ok"`
	*verify.Result
	// Totals sums Entities.
	Totals verify.EntityCounts `json:"totals"`
	// Cost of a run writing every derived item (diff).
	Cost *Cost `json:"cost,omitempty"`
}

// Cost estimates a full run: WriteUnits as transform.WriteUnits counts
// them, priced at PricePerMillion US dollars per million write units
// (migrate's BatchWriteItem, on demand); and, beside it, the same items
// loaded by ImportTable from an export, priced at ImportPricePerGB US
// dollars per GB of the export's DynamoDB JSON before compression.
type Cost struct {
	WriteUnits      int64   `json:"write_units"`
	PricePerMillion float64 `json:"price_per_million"`
	Dollars         float64 `json:"dollars"`
	// ExportBytes is the items' DynamoDB JSON (pg2dynamo export).
	ExportBytes      int64   `json:"export_bytes,omitempty"`
	ImportPricePerGB float64 `json:"import_price_per_gb,omitempty"`
	ImportDollars    float64 `json:"import_dollars,omitempty"`
}

// DefaultImportPricePerGB is ImportTable's price in US dollars per GB of
// source data, uncompressed (us-east-1).
// https://aws.amazon.com/dynamodb/pricing/on-demand/ ("Import from S3")
const DefaultImportPricePerGB = plan.ImportPricePerGB

// New builds the report of res in mode (ModeVerify or ModeDiff); price is
// the price per million write units used by ModeDiff.
func New(mode string, res *verify.Result, price float64) *Report {
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
		t.ExportBytes += e.ExportBytes
	}
	if mode == ModeDiff {
		r.OK = t.Missing == 0 && t.Changed == 0 && res.Stale == 0 && !res.TableMissing
		r.Cost = &Cost{WriteUnits: t.WriteUnits, PricePerMillion: price, Dollars: float64(t.WriteUnits) * price / 1e6,
			ExportBytes: t.ExportBytes}
	} else {
		r.OK = res.OK()
	}
	return r
}

// PriceImport prices the diff's items loaded by ImportTable at perGB US
// dollars per GB of their DynamoDB JSON (Cost.ExportBytes).
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

// Render writes r as text (limit keys per list), markdown (the same) or
// JSON (every key listed, WriteJSON). Every count it prints is exact; a
// list longer than the entries the Result keeps says how many it lists.
// It fails on a write error, or when a list cannot be read back from its
// temporary file.
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

// jsonSkeleton is a Report without its lists: these nil fields hide the
// Result's own (encoding/json prefers the shallower field of a name) and
// are omitted, so that WriteJSON can stream the lists after it.
type jsonSkeleton struct {
	*Report
	Missing    *struct{} `json:"missing,omitempty"`
	Extra      *struct{} `json:"extra,omitempty"`
	Duplicates *struct{} `json:"duplicates,omitempty"`
	Changed    *struct{} `json:"changed,omitempty"`
	InFlight   *struct{} `json:"in_flight,omitempty"`
}

// WriteJSON writes r as one JSON object, indented by two spaces and
// ending in a newline, as json.Encoder with SetIndent("", "  ") would,
// except that the lists (missing, extra, duplicates, changed, in_flight) come last
// and are streamed from their files one entry at a time: memory does not
// grow with them. It decodes into a Report.
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
	for _, l := range lists {
		fmt.Fprintf(bw, ",\n  %q: ", l.name)
		if err := l.l.WriteJSON(bw, "  ", "  "); err != nil {
			return err
		}
	}
	bw.WriteString("\n}\n")
	return bw.Flush()
}

// Headline is the one-line verdict.
func (r *Report) Headline() string {
	t := r.Totals
	if r.Mode == ModeDiff {
		s := fmt.Sprintf("diff of table %s: %d new, %d changed, %d unchanged, %d stale", r.Table, t.Missing, t.Changed, t.Unchanged, r.Stale)
		if r.Unmanaged > 0 {
			s += fmt.Sprintf(" (%d other items not of a mapped type)", r.Unmanaged)
		}
		if r.TableMissing {
			s += fmt.Sprintf("; table %s does not exist: every item is new", r.Table)
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
	c := r.Counts
	s := fmt.Sprintf("verify %s: table %s, %d items expected, %d missing, %d extra, %d differing", verdict, r.Table, t.Expected,
		c.Missing.Total, c.Extra.Total, c.Changed.Total)
	if n := countProblems(r.Entities); n > 0 {
		s += ", " + plural(int64(n), "entity", "entities") + " whose counts disagree"
	}
	if n := c.Duplicates.Total; n > 0 {
		s += ", " + plural(n, "key", "keys") + " derived more than once"
	}
	s += fmt.Sprintf("; %d access-pattern queries, %d wrong", len(r.Patterns), bad)
	if n := c.InFlight.Total; n > 0 {
		s += fmt.Sprintf("; %s changed by the follow while the check ran (lag, not a mismatch)", plural(n, "item", "items"))
	}
	return s
}

func countProblems(es []verify.EntityCounts) int {
	n := 0
	for _, e := range es {
		if e.CountProblem != "" {
			n++
		}
	}
	return n
}

// tableWriter writes a report's tables as text or markdown (md) into b,
// listing at most limit entries of each list.
type tableWriter struct {
	b     *strings.Builder
	md    bool
	limit int
}

// writeTables writes r into b as text or markdown (md): the headline, the
// counts per entity, the lists (limit entries each), the access patterns
// and the cost. It fails when a list cannot be read back.
func writeTables(b *strings.Builder, r *Report, md bool, limit int) error {
	w := &tableWriter{b: b, md: md, limit: limit}
	if md {
		fmt.Fprintf(b, "# %s\n", r.Headline())
	} else {
		fmt.Fprintln(b, r.Headline())
	}
	w.entities(r)
	if err := w.itemLists(r); err != nil {
		return err
	}
	if err := w.changed(r); err != nil {
		return err
	}
	if len(r.Patterns) > 0 {
		w.patterns(r.Patterns)
	}
	if r.Cost != nil {
		w.heading("Cost of the run")
		fmt.Fprintf(b, "%d write units; on demand at $%.3f per million write request units: $%.4f\n",
			r.Cost.WriteUnits, r.Cost.PricePerMillion, r.Cost.Dollars)
		if c := r.Cost; c.ExportBytes > 0 {
			fmt.Fprintf(b, "export + import (ImportTable, into a new table): %.3f GB of DynamoDB JSON at $%.3f per GB: $%.4f, no write units\n",
				float64(c.ExportBytes)/1e9, c.ImportPricePerGB, c.ImportDollars)
		}
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

// entities writes the counts per entity and their total, then the
// entities whose counts disagree, if any.
func (w *tableWriter) entities(r *Report) {
	newWord, extraWord := "missing", "stale"
	if r.Mode == ModeDiff {
		newWord = "new"
	}
	head := []string{"entity", "type", "source rows", "rejected", "expected", "in table", newWord, "changed", "unchanged", extraWord}
	if r.Mode == ModeDiff {
		head = append(head, "write units")
	}
	var rows [][]string
	for _, e := range append(r.Entities, r.Totals) {
		row := []string{e.Entity, e.Type, num(e.SourceRows), num(e.Rejected), num(e.Expected), num(e.Table), num(e.Missing), num(e.Changed), num(e.Unchanged), num(e.Stale)}
		if r.Mode == ModeDiff {
			row = append(row, num(e.WriteUnits))
		}
		rows = append(rows, row)
	}
	w.heading("Items per entity")
	w.table(head, rows)
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

// itemLists writes the lists of missing (new), extra and duplicate keys.
// Each is written even when reading another fails; the errors are joined.
func (w *tableWriter) itemLists(r *Report) error {
	c := r.Counts
	var err error
	if r.Mode == ModeDiff {
		err = errors.Join(w.itemList("New items", r.Missing, c.Missing), w.itemList("Items in the table the source no longer produces", r.Extra, c.Extra))
	} else {
		err = errors.Join(w.itemList("Missing items", r.Missing, c.Missing), w.itemList("Extra items", r.Extra, c.Extra))
	}
	return errors.Join(err, w.itemList("Keys the source derives more than once, not rejected", r.Duplicates, c.Duplicates),
		w.itemList("Items in flight: changed after the check's snapshot by the follow, while the check ran", r.InFlight, c.InFlight))
}

// itemList writes the first keys of list l, whose length is count, under
// title, unless it is empty.
func (w *tableWriter) itemList(title string, l verify.List[verify.ItemRef], count verify.ListCount) error {
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

// changed writes the first differing (changed) items, an attribute a row.
func (w *tableWriter) changed(r *Report) error {
	c := r.Counts
	if c.Changed.Total == 0 {
		return nil
	}
	title := "Differing items"
	if r.Mode == ModeDiff {
		title = "Changed items"
	}
	w.heading(fmt.Sprintf("%s (%d)", title, c.Changed.Total))
	changed, err := r.Changed.Head(w.limit)
	if err != nil {
		return err
	}
	var rows [][]string
	for _, ci := range changed {
		for _, ch := range ci.Changes {
			rows = append(rows, []string{ci.PK, ci.SK, ch.Attribute, string(ch.Before), string(ch.After)})
		}
	}
	if int64(len(changed)) < c.Changed.Total {
		rows = append(rows, []string{more(c.Changed, len(changed)), "", "", "", ""})
	}
	w.table([]string{"partition key", "sort key", "attribute", "table (before)", "source (after)"}, rows)
	return nil
}

// more is the last row of a list whose first shown entries are printed:
// how many are left out, and how many of the list the JSON report holds
// (all, or the first Listed).
func more(count verify.ListCount, shown int) string {
	if count.Truncated() {
		return fmt.Sprintf("… %d more; --format json lists the first %d of %d", count.Total-int64(shown), count.Listed, count.Total)
	}
	return fmt.Sprintf("… %d more (all in --format json)", count.Total-int64(shown))
}

// patternSummary is what the report says of one access pattern: its
// queries run, how many were wrong, a note, and the first wrong answers.
type patternSummary struct {
	index         string
	queries, bad  int
	note          string
	firstProblems []verify.PatternResult
}

// patterns writes one row per access pattern (in the order first seen),
// then the first wrong answers of each, at most limit (at least one).
func (w *tableWriter) patterns(results []verify.PatternResult) {
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

// summarizePatterns sums results up by pattern, keeping the first keep
// wrong answers of each; order is the patterns in the order first seen.
func summarizePatterns(results []verify.PatternResult, keep int) (order []string, per map[string]*patternSummary) {
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

func plural(n int64, one, many string) string {
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
