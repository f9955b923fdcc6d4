package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// changes is a migrate --changes-only report: the comparison found one new
// item, one changed and two stale, all written or deleted and read back,
// but one write did not read back as applied.
func changes() *Report {
	r := sample()
	res := r.Result
	res.Patterns = []outcome.PatternResult{{Pattern: "P", Index: "table", Params: map[string]string{"id": "1"}, Want: 2, Got: 2, OK: true}}
	res.Applied = &outcome.Applied{
		Put:       outcome.NewList(outcome.ItemRef{PK: "E#1", SK: "<&>", Type: "E"}, outcome.ItemRef{PK: "E#2", SK: "x", Type: "E"}),
		Delete:    outcome.NewList(outcome.ItemRef{PK: "E#8", SK: "x", Type: "E"}, outcome.ItemRef{PK: "E#9", SK: "x", Type: "E"}),
		Unapplied: outcome.NewList(outcome.ItemRef{PK: "E#2", SK: "x", Type: "E"}),
		Counts: outcome.AppliedCounts{Put: outcome.ListCount{Total: 2, Listed: 2}, Delete: outcome.ListCount{Total: 2, Listed: 2},
			Unapplied: outcome.ListCount{Total: 1, Listed: 1}},
		ReadBack: true, Matched: 1, Gone: 2,
	}
	c := New(ModeChanges, res, 0)
	c.Applied = &Applied{Command: CommandChangesOnly, Applied: res.Applied, Written: 2, Deleted: 2, DeletedByType: map[string]int64{"E": 2},
		WriteUnits: 5, ConsumedWriteUnits: 4, FullWriteUnits: 7}
	return c
}

// pruned is a verify report after migrate --prune deleted two stale items,
// one more skipped.
func pruned() *Report {
	r := wrong()
	r.Applied = &Applied{Command: CommandPrune, Applied: &outcome.Applied{
		Delete: outcome.NewList(outcome.ItemRef{PK: "E#8", SK: "x", Type: "E"}, outcome.ItemRef{PK: "E#9", SK: "x", Type: "E"}),
		Counts: outcome.AppliedCounts{Delete: outcome.ListCount{Total: 3, Listed: 2}}},
		Deleted: 2, DeletedByType: map[string]int64{"E": 2}, Skipped: 1, WriteUnits: 2, ConsumedWriteUnits: 2}
	return r
}

// A changes-only report says what was written and deleted, and how it read
// back, in its headline and in its own section; its verdict is the
// result's: a write that did not read back fails it.
func TestChangesReport(t *testing.T) {
	r := changes()
	want := "changes-only FAILED: table t, 5 items derived and 6 in the table compared; 2 items written (1 new and 1 changed found), 2 stale deleted; " +
		"5 write units (a full re-put: 7); 1 of the writes did not read back as applied; 1 access-pattern queries, 0 wrong"
	if r.OK || r.Headline() != want {
		t.Errorf("OK %v, headline\n%s\nwant not OK and\n%s", r.OK, r.Headline(), want)
	}
	r.Applied.Applied.Unapplied, r.Applied.Counts.Unapplied, r.Applied.Matched = outcome.List[outcome.ItemRef]{}, outcome.ListCount{}, 2
	if r = New(ModeChanges, r.Result, 0); !r.OK {
		t.Errorf("every write read back: not OK")
	}
	r.Applied = &Applied{Command: CommandChangesOnly, Applied: &outcome.Applied{}}
	if h := r.Headline(); !strings.HasPrefix(h, "changes-only done (not verified: --no-verify)") || strings.Contains(h, "access-pattern") {
		t.Errorf("not read back: headline %q", h)
	}
}

// The JSON report lists the keys written, deleted and not read back as
// applied, with their exact counts, and what the writer counted.
func TestChangesReportJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, changes()); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Mode    string
		Applied struct {
			Command          string
			Written, Deleted int64
			WriteUnits       int64 `json:"write_units"`
			FullWriteUnits   int64 `json:"full_write_units"`
			Counts           outcome.AppliedCounts
			ReadBack         bool `json:"read_back"`
		}
		Written, Deleted, Unapplied []outcome.ItemRef
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if got.Mode != ModeChanges || got.Applied.Command != CommandChangesOnly || got.Applied.Written != 2 || got.Applied.Deleted != 2 ||
		got.Applied.WriteUnits != 5 || got.Applied.FullWriteUnits != 7 || !got.Applied.ReadBack || got.Applied.Counts.Unapplied.Total != 1 {
		t.Errorf("applied %+v", got.Applied)
	}
	if d := gocmp.Diff([]outcome.ItemRef{{PK: "E#1", SK: "<&>", Type: "E"}, {PK: "E#2", SK: "x", Type: "E"}}, got.Written); d != "" {
		t.Errorf("written (-want +got):\n%s", d)
	}
	if len(got.Deleted) != 2 || len(got.Unapplied) != 1 {
		t.Errorf("deleted %v, unapplied %v", got.Deleted, got.Unapplied)
	}
}

// The HTML pages of a changes-only run and of a verify after --prune show
// what was written and deleted, with the exact counts of the lists.
func TestAppliedHTML(t *testing.T) {
	for name, tc := range map[string]struct {
		r     func() *Report
		shows []string
	}{
		"changes-only": {changes, []string{`<p class="kind">pg2dynamo migrate --changes-only</p>`, `<h2>Writes (migrate --changes-only)</h2>`,
			`data-applied="written">2 (the comparison found 1 new, 1 changed)<`, `data-applied="deleted">2 stale (E 2)<`,
			`data-applied="read_back">1 put as derived, 2 deleted gone, 0 retyped, 1 not as applied<`,
			`<h2 data-list="new">New items, written (1)</h2>`, `<h2 data-list="changed">Changed items, written (1)</h2>`,
			`<h2 data-list="stale">Stale items, deleted (2)</h2>`, `<h2 data-list="unapplied">` + titleUnapplied + ` (1)</h2>`}},
		"verify after prune": {pruned, []string{`<h2>Pruned before the check (migrate --prune)</h2>`,
			`data-applied="deleted">2 stale (E 2)<`, `data-applied="skipped">1 stale items retyped`,
			`<h2 data-list="pruned">` + titlePruned + ` (3)</h2>`, `The first 2 shown; the JSON report lists the first 2 of 3.`}},
	} {
		t.Run(name, func(t *testing.T) {
			r := tc.r()
			r.Run = run
			var b bytes.Buffer
			if err := HTML(&b, r); err != nil {
				t.Fatal(err)
			}
			page := strings.ReplaceAll(b.String(), "&#34;", `"`)
			verdict := "bad"
			checkPage(t, "as written", page, r, verdict, nil)
			for _, s := range tc.shows {
				if !strings.Contains(page, s) {
					t.Errorf("the page does not show %q", s)
				}
			}
		})
	}
}
