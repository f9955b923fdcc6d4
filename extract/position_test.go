package extract_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// A read in primary-key order gives each row's position in PostgreSQL's
// own text, for a key of a type pgx decodes to Go values (bytea, a
// composite key with inet and timestamptz) as for any: resuming after the
// first row reads exactly the others, a split boundary is the very
// position of its row, and CanonicalPosition gives a position back
// unchanged while it tells a text that stands for another value ("[1 2]",
// Go's rendering of bytea) or none.
func TestPositionsReadBack(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `
CREATE TABLE b (k bytea PRIMARY KEY, n integer NOT NULL);
INSERT INTO b VALUES ('\x0102', 1), ('\x2000', 2), ('\xdead', 3);
CREATE TABLE c (ip inet, at timestamptz, n integer NOT NULL, PRIMARY KEY (ip, at));
INSERT INTO c VALUES ('10.1.2.3', '2024-01-02 03:04:05.5+02', 1), ('10.1.2.3', '2024-01-03', 2), ('::1', '2024-01-01', 3);`)
	ctx := context.Background()
	src, err := extract.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close(ctx)
	if err := src.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	m := &mapping.Mapping{File: "m.yaml"}
	for _, tc := range []struct {
		table string
		keys  int
		want  [][]string
	}{
		{"b", 1, [][]string{{`\x0102`}, {`\x2000`}, {`\xdead`}}},
		{"c", 2, [][]string{{"10.1.2.3", "2024-01-02 01:04:05.5+00"}, {"10.1.2.3", "2024-01-03 00:00:00+00"}, {"::1", "2024-01-01 00:00:00+00"}}},
	} {
		t.Run(tc.table, func(t *testing.T) {
			s := mapping.Source{Table: tc.table}
			cols, err := src.DescribeSource(ctx, m, "entities.E.source", s)
			if err != nil {
				t.Fatal(err)
			}
			q := extract.Query{Source: s, Columns: cols, OrderBy: cols[:tc.keys]}
			read := func(q extract.Query) (pos [][]string, ns []int32) {
				t.Helper()
				err := src.Stream(ctx, tc.table, q, func(row []any) error {
					pos = append(pos, q.Position(row))
					ns = append(ns, row[tc.keys].(int32))
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				return pos, ns
			}
			pos, ns := read(q)
			if d := cmp.Diff(tc.want, pos); d != "" || !cmp.Equal(ns, []int32{1, 2, 3}) {
				t.Fatalf("rows %v, positions (-want +got):\n%s", ns, d)
			}
			q.After = pos[0]
			if _, after := read(q); !cmp.Equal(after, []int32{2, 3}) {
				t.Errorf("rows after %q: %v, want 2 and 3", pos[0], after)
			}
			q.Until = pos[1]
			if n, err := src.CountRange(ctx, q); err != nil || n != 1 {
				t.Errorf("CountRange after %q up to %q: %d, %v; want 1", pos[0], pos[1], n, err)
			}
			q.Until = nil
			q.After = nil
			bounds, err := src.Positions(ctx, q, []int64{2, 1, 4})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff([][]string{pos[1], pos[0], nil}, bounds); d != "" {
				t.Errorf("positions of rows 2, 1 and 4 (of 3) (-as read +Positions):\n%s", d)
			}
			q.After = pos[0]
			if bounds, err := src.Positions(ctx, q, []int64{1}); err != nil || !cmp.Equal(bounds, [][]string{pos[1]}) {
				t.Errorf("position of row 1 after %q: %q, %v; want %q", pos[0], bounds, err, pos[1])
			}
			q.After = nil
			for _, p := range pos {
				if canon, ok, err := src.CanonicalPosition(ctx, q, p); err != nil || !ok || !cmp.Equal(canon, p) {
					t.Errorf("CanonicalPosition(%q) = %q, %v, %v; want it unchanged", p, canon, ok, err)
				}
			}
		})
	}

	s := mapping.Source{Table: "b"}
	cols, err := src.DescribeSource(ctx, m, "entities.E.source", s)
	if err != nil {
		t.Fatal(err)
	}
	q := extract.Query{Source: s, Columns: cols, OrderBy: cols[:1]}
	if canon, ok, err := src.CanonicalPosition(ctx, q, []string{"[1 2]"}); err != nil || !ok || canon[0] != `\x5b3120325d` {
		t.Errorf(`CanonicalPosition("[1 2]") = %q, %v, %v; want \x5b3120325d: other bytes`, canon, ok, err)
	}
	if _, ok, err := src.CanonicalPosition(ctx, q, []string{`\xzz`}); err != nil || ok {
		t.Errorf(`CanonicalPosition("\xzz") = %v, %v; want refused`, ok, err)
	}
	// The refusal left the snapshot usable, and exportable: no
	// subtransaction is left open.
	if _, err := src.Count(ctx, &mapping.Entity{Name: "E", Source: s}); err != nil {
		t.Errorf("after a refused position: %v", err)
	}
	fork, err := src.Fork(ctx)
	if err != nil {
		t.Fatalf("fork after CanonicalPosition: %v", err)
	}
	fork.Close(ctx)
}
