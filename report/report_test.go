package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// sample is a report with every part filled in, lists held in memory.
func sample() *Report {
	res := &outcome.Result{
		Table: "t",
		Entities: []outcome.EntityCounts{{Entity: "E", Type: "E", SourceRows: 5, Rows: 5, ItemsPerRow: 1, Expected: 5, Derived: 5, Table: 6, Missing: 1, Changed: 1, Unchanged: 3, Stale: 2,
			WriteUnits: 7, ChangeWriteUnits: 3, StaleWriteUnits: 2}},
		Missing: outcome.NewList(outcome.ItemRef{PK: "E#1", SK: "<&>", Type: "E"}),
		Extra:   outcome.NewList(outcome.ItemRef{PK: "E#8", SK: "x", Type: "E"}, outcome.ItemRef{PK: "E#9", SK: "x", Type: "E"}),
		Changed: outcome.NewList(outcome.ChangedItem{ItemRef: outcome.ItemRef{PK: "E#2", SK: "x", Type: "E"},
			Changes: []outcome.AttrChange{{Attribute: "v", Before: json.RawMessage(`{"S":"a"}`), After: json.RawMessage(`{"S":"b"}`)}},
			Before:  json.RawMessage(`{"v":{"S":"a"}}`), After: json.RawMessage(`{"v":{"S":"b"}}`)}),
		Stale: 2,
		Counts: outcome.ListCounts{Missing: outcome.ListCount{Total: 1, Listed: 1}, Extra: outcome.ListCount{Total: 2, Listed: 2},
			Changed: outcome.ListCount{Total: 1, Listed: 1}},
		Patterns: []outcome.PatternResult{{Pattern: "P", Index: "table", Params: map[string]string{"id": "1"}, Want: 2, Got: 1, Problem: "item 2 missing"}},
	}
	return New(ModeDiff, res, transform.PricePerMillionWrites)
}

// WriteJSON, which streams the lists, writes what encoding/json writes
// for the report: the same object once decoded, indented by two spaces.
func TestWriteJSONIsTheReportsJSON(t *testing.T) {
	r := sample()
	var got bytes.Buffer
	if err := WriteJSON(&got, r); err != nil {
		t.Fatal(err)
	}
	want, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var g, w any
	if err := json.Unmarshal(got.Bytes(), &g); err != nil {
		t.Fatalf("%v\n%s", err, got.String())
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if d := gocmp.Diff(w, g); d != "" {
		t.Errorf("decoded (-encoding/json +WriteJSON):\n%s", d)
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, got.Bytes(), "", "  "); err != nil || indented.String() != got.String() {
		t.Errorf("not laid out as json.Indent lays it out:\n%s", got.String())
	}
	if !strings.HasSuffix(got.String(), "}\n") {
		t.Error("no final newline")
	}
}

// The JSON report keeps its older names (missing, extra, and missing per
// entity) and adds the counts in the report's words (summary) and the
// run; it decodes back into a Report.
func TestJSONNamesAndSummary(t *testing.T) {
	r := wrong()
	r.Run = run
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Missing []any            `json:"missing"`
		Extra   []any            `json:"extra"`
		Totals  map[string]any   `json:"totals"`
		Summary map[string]int64 `json:"summary"`
		Run     map[string]any   `json:"run"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"new": 3, "changed": 3, "stale": 2, "unchanged": 4, "other": 0, "duplicates": 1, "in_flight": 0}
	if d := gocmp.Diff(want, got.Summary); d != "" {
		t.Errorf("summary (-want +got):\n%s", d)
	}
	if len(got.Missing) != 2 || len(got.Extra) != 2 || got.Totals["missing"] != 3.0 {
		t.Errorf("older names: %d missing, %d extra listed, totals %v; want 2, 2, missing 3", len(got.Missing), len(got.Extra), got.Totals)
	}
	if got.Run["mapping_sha256"] != run.MappingSHA256 || got.Run["time"] != run.Time {
		t.Errorf("run %v", got.Run)
	}
}
