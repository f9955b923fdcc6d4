package report

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// wrong is a verify report with every table text and markdown print:
// a count that disagrees, lists longer than they hold and than the limit,
// duplicate keys, and patterns that pass, pass with a note, are not run
// and fail more often than the limit shows.
func wrong() *Report {
	refs := func(prefix string, n int) []outcome.ItemRef {
		out := make([]outcome.ItemRef, n)
		for i := range out {
			out[i] = outcome.ItemRef{PK: fmt.Sprintf("%s#%d", prefix, i), SK: "x|y", Type: "E"}
		}
		return out
	}
	res := &outcome.Result{
		Table: "t",
		Entities: []outcome.EntityCounts{
			{Entity: "E", Type: "E", SourceRows: 5, Rows: 5, ItemsPerRow: 1, Expected: 5, Derived: 5, Table: 6, Missing: 3, Changed: 3, Unchanged: 1, Stale: 2},
			{Entity: "F", Type: "F", SourceRows: 3, Rejected: 1, Rows: 2, ItemsPerRow: 2, Expected: 4, Derived: 3, Duplicates: 1, Table: 3, Unchanged: 3, CountProblem: "3 items derived, 4 expected"},
		},
		Missing:    outcome.NewList(refs("M", 2)...),
		Extra:      outcome.NewList(refs("X", 2)...),
		Duplicates: outcome.NewList(refs("D", 1)...),
		Changed: outcome.NewList(outcome.ChangedItem{ItemRef: outcome.ItemRef{PK: "E#2", SK: "x", Type: "E"},
			Changes: []outcome.AttrChange{{Attribute: "v", Before: []byte(`{"S":"a"}`), After: []byte(`{"S":"b"}`)},
				{Attribute: "w", Before: []byte(`{"N":"1"}`), After: []byte(`{"N":"2"}`)},
				{Attribute: "x", Before: []byte(`{"L":[{"N":"1"},{"S":"a|b"},{"B":"AAE="}]}`), After: []byte(`null`)},
				{Attribute: "y", Before: []byte(`null`), After: []byte(`{"M":{"k":{"BOOL":true},"s":{"SS":["p","q"]},"z":{"NULL":true}}}`)}}},
			outcome.ChangedItem{ItemRef: outcome.ItemRef{PK: "E#3", SK: "x", Type: "E"},
				Changes: []outcome.AttrChange{{Attribute: "v", Before: []byte(`{"S":"c"}`), After: []byte(`{"S":"d"}`)}}}),
		Stale: 2,
		Counts: outcome.ListCounts{Missing: outcome.ListCount{Total: 3, Listed: 2}, Extra: outcome.ListCount{Total: 2, Listed: 2},
			Duplicates: outcome.ListCount{Total: 1, Listed: 1}, Changed: outcome.ListCount{Total: 3, Listed: 2}},
		Patterns: []outcome.PatternResult{
			{Pattern: "P", Index: "table", Params: map[string]string{"id": "1"}, Want: 2, Got: 2, OK: true},
			{Pattern: "Q", Index: "GSI1", Params: map[string]string{"b": "2", "a": "1"}, Want: 2, Got: 1, Problem: "item 2 missing"},
			{Pattern: "Q", Index: "GSI1", Params: map[string]string{"a": "3"}, Want: 1, Got: 0, Problem: "item 1 missing"},
			{Pattern: "R", Index: "table", NotRun: true, OK: true, Note: "the source derives no item"},
		},
	}
	return New(ModeVerify, res, transform.PricePerMillionWrites)
}

// TestRenderGolden renders reports as text and markdown and compares with
// testdata/<report>.<limit>.<format>.golden (-update rewrites them).
func TestRenderGolden(t *testing.T) {
	reports := map[string]func() *Report{"diff": sample, "verify": wrong, "changes": changes, "pruned": pruned}
	for name, r := range reports {
		for _, limit := range []int{1, 10} {
			for _, format := range []string{FormatText, FormatMarkdown} {
				t.Run(fmt.Sprintf("%s/%d/%s", name, limit, format), func(t *testing.T) {
					var b strings.Builder
					if err := Render(&b, r(), format, limit); err != nil {
						t.Fatal(err)
					}
					file := filepath.Join("testdata", fmt.Sprintf("%s.%d.%s.golden", name, limit, format))
					if *update {
						if err := os.MkdirAll("testdata", 0o755); err != nil {
							t.Fatal(err)
						}
						if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
							t.Fatal(err)
						}
						return
					}
					want, err := os.ReadFile(file)
					if err != nil {
						t.Fatal(err)
					}
					if d := gocmp.Diff(string(want), b.String()); d != "" {
						t.Errorf("%s (-want +got):\n%s", file, d)
					}
				})
			}
		}
	}
}
