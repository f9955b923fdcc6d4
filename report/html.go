package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// htmlListed is how many entries of each list the page shows; every exact count
// is given.
const htmlListed = 100

// HTML writes r as one self-contained, static page (no network, inline styles),
// readable with JavaScript disabled and printable; an optional script only
// folds long lists. It shows the verdict, run, counts in Summary's words and
// per entity, a diff's cost, the first htmlListed entries of each list (changed
// attributes side by side) and the access patterns. It fails on a write error
// or an unreadable list file.
func HTML(w io.Writer, r *Report) error {
	p, err := newPage(r)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, p); err != nil {
		return err
	}
	_, err = w.Write(b.Bytes())
	return err
}

// page is what the HTML template shows of a Report.
type page struct {
	*Report
	Diff bool
	// Priced shows the write units per entity (a diff, a changes-only run).
	Priced   bool
	Headline string
	// Verdict is the headline's class: "ok", "bad" (verify failed) or "info" (a
	// diff).
	Verdict string
	Lead    string
	Facts   []fact
	Counts  []summaryCount
	Rows    []outcome.EntityCounts // the entities, then their total
	// Problems are the entities whose counts disagree.
	Problems   []outcome.EntityCounts
	CostRows   []costRow
	ImportNote string
	New        *refList
	Changed    *changedList
	Stale      *refList
	Others     []*refList // duplicate keys, items in flight
	// Patterns sums the access patterns up; Wrong holds their first wrong
	// answers.
	Patterns []patternRow
	Wrong    []outcome.PatternResult
	// Kind names the command; AppliedTitle and Applied are what the run wrote
	// before the check, if anything.
	Kind         string
	AppliedTitle string
	Applied      []fact
}

// fact is one line of the run's description.
type fact struct{ Key, Label, Value string }

// summaryCount is a Summary count with word and meaning; Bad marks one failing
// verify.
type summaryCount struct {
	Key, Word, Meaning string
	N                  int64
	Bad                bool
}

// refList is one list of item keys as the page shows it.
type refList struct {
	ID, Title, Meaning, Note string
	Total                    int64
	Refs                     []outcome.ItemRef
}

// patternRow is one access pattern, summed up.
type patternRow struct {
	Name, Index, Result string
	Queries             int
	OK                  bool
}

func newPage(r *Report) (*page, error) {
	p := &page{Report: r, Diff: r.Mode == ModeDiff, Priced: r.Mode == ModeDiff || r.Mode == ModeChanges, Headline: r.Headline(),
		Rows: append(slices.Clone(r.Entities), r.Totals)}
	p.Kind, p.Verdict, p.Lead = pageVerdict(r)
	p.Facts = runFacts(r)
	p.Counts = summaryCounts(r)
	for _, e := range r.Entities {
		if e.CountProblem != "" {
			p.Problems = append(p.Problems, e)
		}
	}
	if r.Cost != nil {
		p.CostRows, p.ImportNote = costRows(r.Cost), importNote(r.Cost)
	}
	if r.Applied != nil {
		p.AppliedTitle = appliedTitle(r.Applied)
		for _, row := range appliedRows(r) {
			p.Applied = append(p.Applied, fact{Key: strings.ReplaceAll(row[0], " ", "_"), Label: row[0], Value: row[1]})
		}
	}
	c := r.Counts
	newTitle, staleT, staleM := "New items", staleTitle(r), staleMeaning(r)
	if r.Mode == ModeChanges {
		newTitle, staleT = changesTitle(r, "new"), changesTitle(r, "stale")
	}
	var err, e error
	p.New, e = newRefList("new", newTitle, sentence(meaningNew), r.Missing, c.Missing)
	err = errors.Join(err, e)
	p.Changed, e = newChangedList(r)
	err = errors.Join(err, e)
	p.Stale, e = newRefList("stale", staleT, staleM, r.Extra, c.Extra)
	err = errors.Join(err, e)
	others := []struct {
		id, title string
		list      outcome.List[outcome.ItemRef]
		count     outcome.ListCount
	}{{"duplicates", titleDuplicates, r.Duplicates, c.Duplicates}, {"in_flight", titleInFlight, r.InFlight, c.InFlight}}
	for _, l := range append(others, appliedLists(r)...) {
		rl, e := newRefList(l.id, l.title, "", l.list, l.count)
		err = errors.Join(err, e)
		if rl != nil {
			p.Others = append(p.Others, rl)
		}
	}
	p.Patterns, p.Wrong = patternRows(r.Patterns)
	return p, err
}

// pageVerdict is the command, headline class and the sentence under it.
func pageVerdict(r *Report) (kind, verdict, lead string) {
	switch {
	case r.Mode == ModeDiff:
		return "pg2dynamo diff", "info", "A preview: what a migration would change in the table. Nothing was written; these counts are not errors."
	case r.Mode == ModeChanges && (r.Applied == nil || !r.Applied.ReadBack):
		return "pg2dynamo migrate --changes-only", "info", "The new and changed items were written and the stale ones deleted, as the comparison found them; nothing was read back (--no-verify)."
	case r.Mode == ModeChanges && r.OK:
		return "pg2dynamo migrate --changes-only", "ok", "Only what differed was written: the new and changed items put, the stale ones deleted. Every write read back as applied, and every access pattern answers as it should."
	case r.Mode == ModeChanges:
		return "pg2dynamo migrate --changes-only", "bad", "The new and changed items were written and the stale ones deleted, as the comparison found them, but the table does not match the source: the counts below say where."
	case r.OK && r.Totals.Rejected > 0:
		return "pg2dynamo verify", "ok", fmt.Sprintf("The table holds exactly the items derived from the source's rows but for %s that cannot become items (rejected: the entity table below counts them per entity, the rejects file of the run that wrote the table gives each reason), and every access pattern answers as it should. Nothing was written.",
			Count(r.Totals.Rejected, "row", "rows"))
	case r.OK:
		return "pg2dynamo verify", "ok", "The table holds exactly the items derived from the source, and every access pattern answers as it should. Nothing was written."
	}
	return "pg2dynamo verify", "bad", "The table does not match the source: the counts below say where. Nothing was written."
}

// runFacts describes the run, or only the table when the report does not say.
func runFacts(r *Report) []fact {
	run := r.Run
	if run == nil {
		return []fact{{"table", "Table", r.Table}}
	}
	endpoint := run.Endpoint
	if endpoint == "" {
		endpoint = "AWS, the region's endpoint"
	}
	if run.Region != "" {
		endpoint += " (region " + run.Region + ")"
	}
	sha := run.MappingSHA256
	if sha == "" {
		sha = "not read again: not a regular file"
	}
	return []fact{{"time", "Time (UTC)", run.Time}, {"source", "Source", run.Source}, {"endpoint", "DynamoDB endpoint", endpoint},
		{"table", "Table", run.Table}, {"mapping", "Mapping file", run.Mapping}, {"mapping_sha256", "Mapping SHA-256", sha},
		{"version", "pg2dynamo", run.Version}}
}

// summaryCounts are the shown counts: new, changed, stale and unchanged always,
// others when non-zero.
func summaryCounts(r *Report) []summaryCount {
	n, verifying := r.Summary, r.Mode == ModeVerify
	out := []summaryCount{
		{"new", "new", meaningNew, n.New, verifying && n.New > 0},
		{"changed", "changed", meaningChanged, n.Changed, verifying && n.Changed > 0},
		{"stale", "stale", meaningStale, n.Stale, verifying && n.Stale > 0},
		{"unchanged", "unchanged", meaningUnchanged, n.Unchanged, false},
	}
	if n.Other > 0 {
		out = append(out, summaryCount{"other", "other", meaningOther, n.Other, false})
	}
	if n.Duplicates > 0 {
		out = append(out, summaryCount{"duplicates", "keys derived twice", "keys the source derives more than once, not rejected: a run writes one over the other", n.Duplicates, verifying})
	}
	if n.InFlight > 0 {
		out = append(out, summaryCount{"in_flight", "in flight", "changed by the follow while the check ran: lag, not a mismatch", n.InFlight, false})
	}
	return out
}

// staleMeaning says what the stale list holds.
func staleMeaning(r *Report) string {
	if r.Summary.Other == 0 {
		return sentence(meaningStale)
	}
	return fmt.Sprintf("%d stale: %s; %d other: %s.", r.Summary.Stale, meaningStale, r.Summary.Other, meaningOther)
}

// sentence is s with a capital first letter and a full stop.
func sentence(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// newRefList holds l's first htmlListed keys (count its length); nil when
// empty.
func newRefList(id, title, meaning string, l outcome.List[outcome.ItemRef], count outcome.ListCount) (*refList, error) {
	if count.Total == 0 {
		return nil, nil
	}
	refs, err := l.Head(htmlListed)
	return &refList{ID: id, Title: title, Meaning: meaning, Total: count.Total, Refs: refs, Note: shownNote(count, len(refs), "")}, err
}

// shownNote says how many of count entries the page and the JSON report show,
// when not all; extra qualifies them.
func shownNote(count outcome.ListCount, shown int, extra string) string {
	if int64(shown) >= count.Total {
		return ""
	}
	json := fmt.Sprintf("the JSON report lists all %d", count.Total)
	if count.Truncated() {
		json = fmt.Sprintf("the JSON report lists the first %d of %d", count.Listed, count.Total)
	}
	return fmt.Sprintf("The first %d shown%s; %s.", shown, extra, json)
}

// patternRows sums results up by pattern, with each one's first htmlListed
// wrong answers.
func patternRows(results []outcome.PatternResult) ([]patternRow, []outcome.PatternResult) {
	order, per := summarizePatterns(results, htmlListed)
	var rows []patternRow
	var wrong []outcome.PatternResult
	for _, name := range order {
		a := per[name]
		row := patternRow{Name: name, Index: a.index, Queries: a.queries, Result: "ok", OK: a.bad == 0}
		if a.note != "" {
			row.Result = "ok, " + a.note
		}
		if a.bad > 0 {
			row.Result = fmt.Sprintf("%d WRONG", a.bad)
		}
		rows = append(rows, row)
		wrong = append(wrong, a.firstProblems...)
	}
	return rows, wrong
}

// changedList is the changed items as the page shows them.
type changedList struct {
	Title string
	Total int64
	Note  string
	Items []changedItem
}

// changedItem is a changed item's attributes aligned, both sides a row; Whole
// when all are shown, not only those that differ.
type changedItem struct {
	outcome.ItemRef
	Whole bool
	Rows  []attrRow
}

// attrRow is one attribute of a changed item; Tag is "changed", "added"
// (derived, absent in the table), "removed" (in the table, not derived) or ""
// (same: Before shown once).
type attrRow struct {
	Name, Tag     string
	Before, After value
}

// newChangedList reads the changed items shown: the first htmlListed and every
// one kept whole.
func newChangedList(r *Report) (*changedList, error) {
	count := r.Counts.Changed
	if count.Total == 0 {
		return nil, nil
	}
	l := &changedList{Title: "Changed items", Total: count.Total}
	if r.Mode == ModeChanges {
		l.Title = changesTitle(r, "changed")
	}
	i, sampled := 0, 0
	for c, err := range r.Changed.All() {
		if err != nil {
			return l, err
		}
		if i < htmlListed || c.Before != nil {
			l.Items = append(l.Items, newChangedItem(c))
			if i >= htmlListed {
				sampled++
			}
		}
		i++
	}
	extra := ""
	if sampled > 0 {
		extra = fmt.Sprintf(", and %d more with every attribute", sampled)
	}
	l.Note = shownNote(count, len(l.Items)-sampled, extra)
	return l, nil
}

// newChangedItem aligns c's attributes: all when c is kept whole, else those
// that differ.
func newChangedItem(c outcome.ChangedItem) changedItem {
	out := changedItem{ItemRef: c.ItemRef}
	differs := map[string]outcome.AttrChange{}
	for _, ch := range c.Changes {
		differs[ch.Attribute] = ch
	}
	before, okB := parseItem(c.Before)
	after, okA := parseItem(c.After)
	names := slices.Sorted(maps.Keys(differs))
	if out.Whole = okB && okA; out.Whole {
		all := maps.Clone(before)
		maps.Copy(all, after)
		names = slices.Sorted(maps.Keys(all))
	}
	for _, name := range names {
		row := attrRow{Name: name}
		if ch, ok := differs[name]; ok {
			row.Before, row.After = parseValue(ch.Before), parseValue(ch.After)
			switch {
			case row.Before.Kind == "absent":
				row.Tag = "added"
			case row.After.Kind == "absent":
				row.Tag = "removed"
			default:
				row.Tag = "changed"
			}
		} else {
			row.Before, row.After = before[name], after[name]
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}
