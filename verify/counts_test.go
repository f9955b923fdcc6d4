package verify

import (
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/internal/extsort"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// Two derived items with one key are a duplicate no check rejected, never
// a rejected row: the entity's counts disagree with PostgreSQL's, the key
// is listed, and the comparison fails, even when the table holds the
// item both render (identical content).
func TestCompareBucketsCountsDuplicatesApart(t *testing.T) {
	m, err := mapping.Parse("c.yaml", []byte("table: {name: ccc}\nentities:\n  C:\n    source: {table: c}\n    pk: C#${id}\n    sk: C\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := transform.Compile(m, 0, transform.Sources{Columns: []extract.Column{{Name: "id", Type: "int4"}}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := extsort.NewGroup("pg2dynamo-test-", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	sp, err := newSpill(g, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	one, two := []byte(`{"PK":{"S":"C#1"}}`), []byte(`{"PK":{"S":"C#2"}}`)
	for _, rec := range []struct {
		side side
		key  string
		item []byte
	}{
		{fromSource, "C#1\x00C", one}, {fromSource, "C#1\x00C", one}, {fromSource, "C#2\x00C", two},
		{fromTable, "C#1\x00C", one}, {fromTable, "C#2\x00C", two},
	} {
		entity := 0
		if rec.side == fromTable {
			entity = -1
		}
		if err := sp.add(rec.side, entity, rec.key, rec.item, ""); err != nil {
			t.Fatal(err)
		}
	}
	r := &outcome.Result{Entities: []outcome.EntityCounts{{Entity: "C", SourceRows: 3, Rows: 3, ItemsPerRow: 1}}, Files: g}
	if err := compareBuckets(r, sp, []*transform.Plan{p}, listOptions{sampleChanged: 20, maxListed: MaxListed, owners: newOwners([]*transform.Plan{p}, nil)}); err != nil {
		t.Fatal(err)
	}
	checkCounts(&r.Entities[0])
	e := r.Entities[0]
	got := [6]int64{e.Rejected, e.Expected, e.Derived, e.Duplicates, e.Unchanged, e.Changed}
	if want := [6]int64{0, 3, 2, 1, 2, 0}; got != want {
		t.Errorf("rejected, expected, derived, duplicates, unchanged, changed = %v; want %v", got, want)
	}
	dups, err := r.Duplicates.Slice()
	if err != nil {
		t.Fatal(err)
	}
	if d := gocmp.Diff([]outcome.ItemRef{{PK: "C#1", SK: "C", Type: "C"}}, dups); d != "" {
		t.Errorf("duplicates (-want +got):\n%s", d)
	}
	if !strings.Contains(e.CountProblem, "and 1 more with the key of another derived item") {
		t.Errorf("count problem %q does not name the duplicate", e.CountProblem)
	}
	if r.OK() {
		t.Error("a source duplicate passes")
	}
}

// The items derived per entity are checked against PostgreSQL's row count
// less the rows rejected, each row giving one item, or two with a mirror.
func TestCheckCounts(t *testing.T) {
	tests := []struct {
		name string
		in   outcome.EntityCounts
		want string // a part of CountProblem; "" for none
	}{
		{"all rows give items", outcome.EntityCounts{SourceRows: 5, Rows: 5, Rejected: 1, ItemsPerRow: 1, Derived: 4}, ""},
		{"mirrors give two", outcome.EntityCounts{SourceRows: 5, Rows: 5, Rejected: 1, ItemsPerRow: 2, Derived: 8}, ""},
		{"empty", outcome.EntityCounts{ItemsPerRow: 1}, ""},
		{"a row the transform never read", outcome.EntityCounts{SourceRows: 5, Rows: 4, ItemsPerRow: 1, Derived: 4},
			"PostgreSQL counts 5 rows, 0 rejected: 5 items expected (1 a row); the transform read 4 rows and derived 4 items with distinct keys"},
		{"a mirror item missing", outcome.EntityCounts{SourceRows: 2, Rows: 2, ItemsPerRow: 2, Derived: 3},
			"4 items expected (2 a row)"},
		{"a duplicate", outcome.EntityCounts{SourceRows: 2, Rows: 2, ItemsPerRow: 1, Derived: 1, Duplicates: 1},
			"derived 1 items with distinct keys, and 1 more with the key of another derived item"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.in
			checkCounts(&e)
			if want := (e.SourceRows - e.Rejected) * e.ItemsPerRow; e.Expected != want {
				t.Errorf("expected %d, want %d", e.Expected, want)
			}
			if (tc.want == "") != (e.CountProblem == "") || !strings.Contains(e.CountProblem, tc.want) {
				t.Errorf("count problem %q; want one containing %q", e.CountProblem, tc.want)
			}
		})
	}
}
