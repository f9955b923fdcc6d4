package extract_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// TestDescribeArrayDims reads the declared dimensions of array columns
// (pg_attribute.attndims) from a table and from a query over it; a view's
// columns and expressions have none (0).
func TestDescribeArrayDims(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE t (id integer PRIMARY KEY, tags text[], grid int[][], cube text[][][]);
CREATE VIEW v AS SELECT * FROM t;`)
	ctx := context.Background()
	src, err := extract.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close(ctx)
	m := &mapping.Mapping{File: "m.yaml"}
	for _, tc := range []struct {
		name string
		src  mapping.Source
		want map[string]int
	}{
		{"table", mapping.Source{Table: "t"}, map[string]int{"id": 0, "tags": 1, "grid": 2, "cube": 3}},
		{"query", mapping.Source{Query: "SELECT grid, tags, ARRAY[1, 2] AS expr FROM t"}, map[string]int{"grid": 2, "tags": 1, "expr": 0}},
		{"view", mapping.Source{Table: "v"}, map[string]int{"id": 0, "tags": 0, "grid": 0, "cube": 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cols, err := src.DescribeSource(ctx, m, "entities.E.source", tc.src)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, c := range cols {
				got[c.Name] = c.Dims
				if c.Dims > 0 && !c.Array {
					t.Errorf("column %s: Dims %d but not an array", c.Name, c.Dims)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("dims (-want +got):\n%s", d)
			}
		})
	}
}

// A statement that fails before its first row (here a column dropped
// after the columns were described) is an error naming the entity and
// PostgreSQL's cause, also when the layout has array columns.
func TestStreamFailureBeforeRowsIsAnError(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE t (id integer PRIMARY KEY, subject text, tags text[]); INSERT INTO t VALUES (1, 'a', '{x}')`)
	ctx := context.Background()
	src, err := extract.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close(ctx)
	cols, err := src.DescribeSource(ctx, &mapping.Mapping{File: "m.yaml"}, "entities.E.source", mapping.Source{Table: "t"})
	if err != nil {
		t.Fatal(err)
	}
	q := extract.Query{Source: mapping.Source{Table: "t"}, Columns: cols}
	stream := func() error {
		if err := src.Begin(ctx); err != nil {
			t.Fatal(err)
		}
		defer src.End(ctx)
		return src.Stream(ctx, "E", q, func([]any) error { return nil })
	}
	// Read once first, as a follow does window after window: the
	// statement is prepared and its description cached.
	if err := stream(); err != nil {
		t.Fatal(err)
	}
	testenv.Exec(t, url, `ALTER TABLE t DROP COLUMN subject`)
	err = stream()
	if err == nil || !strings.Contains(err.Error(), "read E") || !strings.Contains(err.Error(), "subject does not exist") {
		t.Fatalf("Stream after DROP COLUMN: got %v, want an error naming E and the missing column", err)
	}
}
