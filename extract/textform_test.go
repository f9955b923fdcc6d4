package extract_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// textFormSQL holds a value of each kind of type read in its text form
// whose cast to text is not its output function (inet, cidr), and a few
// whose is, in a table, an array and a composite.
const textFormSQL = `
CREATE TYPE pair AS (ip inet, f double precision);
CREATE TABLE tf (id integer PRIMARY KEY, ip inet, net cidr, ch "char", iv interval, mac macaddr, pt point, pr pair,
  ips inet[], grid inet[][], boxes box[]);
INSERT INTO tf VALUES
  (1, '10.1.2.3', '10.0.0.0/8', 'x', '1 day 02:00', '08:00:2b:01:02:03', '(0.1,2)', ROW('::1', 0.1),
   '{10.1.2.3,NULL,::1}', '[0:1][1:2]={{10.0.0.1,10.0.0.2/24},{::1/128,NULL}}', '{(1,1),(0,0);(3,3),(2,2)}'),
  (2, '::1', '2001:db8::/32', chr(233)::"char", '-3 mons', NULL, NULL, ROW('10.0.0.1/8', -2.5e-7), '{}', NULL, NULL),
  (3, '10.0.0.1/8', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);`

// psqlRows runs query with psql (-At, fields split by U+001F, NULL as
// "<NULL>") and returns its output: PostgreSQL's own text of each value.
func psqlRows(t *testing.T, url, query string) [][]string {
	t.Helper()
	cmd := exec.Command("psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", "-F", "\x1f", "-P", "null=<NULL>", "-d", url, "-c", query)
	cmd.Env = append(os.Environ(), "PGOPTIONS=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		rows = append(rows, strings.Split(line, "\x1f"))
	}
	return rows
}

// Every column read in its text form, as a column and inside an embed's
// records, is the text psql prints for it (the type's output function):
// 10.1.2.3 and ::1, not text(inet)'s 10.1.2.3/32 and ::1/128. Arrays keep
// their dimensions and NULLs, element by element in the same text, box[]
// (delimited by ';') included.
func TestTextFormIsTheOutputFunction(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, textFormSQL)
	ctx := context.Background()
	src, err := extract.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close(ctx)
	m := &mapping.Mapping{File: "m.yaml"}
	tbl := mapping.Source{Table: "tf"}
	cols, err := src.DescribeSource(ctx, m, "entities.E.source", tbl)
	if err != nil {
		t.Fatal(err)
	}
	q := extract.Query{Source: tbl, Columns: cols,
		Joins:   []extract.Join{{Kind: extract.JoinEmbed, Source: tbl, On: [][2]string{{"id", "id"}}, Columns: cols}},
		OrderBy: cols[:1]}
	if err := src.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	var got, gotEmbed [][]any
	err = src.Stream(ctx, "E", q, func(values []any) error {
		got = append(got, values[:len(cols)])
		gotEmbed = append(gotEmbed, values[len(cols)].([]any)[0].([]any))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	want := psqlRows(t, url, "SELECT id, ip, net, ch, iv, mac, pt, pr FROM tf ORDER BY id")
	wantArrays := [][]any{
		{[]any{"10.1.2.3", nil, "::1"}, []any{[]any{"10.0.0.1", "10.0.0.2/24"}, []any{"::1", nil}}, []any{"(1,1),(0,0)", "(3,3),(2,2)"}},
		{[]any{}, nil, nil},
		{nil, nil, nil},
	}
	if len(got) != len(want) {
		t.Fatalf("read %d rows, psql %d", len(got), len(want))
	}
	for r := range got {
		for k, vals := range [][]any{got[r], gotEmbed[r]} {
			var text []string // columns ip to pr: all read as text
			for i, c := range cols[1:8] {
				s, ok := vals[i+1].(string)
				switch {
				case vals[i+1] == nil:
					s = "<NULL>"
				case !ok:
					t.Errorf("row %d column %s: %T, want its text", r+1, c.Name, vals[i+1])
				}
				text = append(text, s)
			}
			if d := cmp.Diff(want[r][1:], text); d != "" {
				t.Errorf("row %d: text (-psql +pg2dynamo):\n%s", r+1, d)
			}
			arrays := slices.Clone(vals[8:])
			if k == 1 {
				// pgx flattens a multi-dimensional array inside a record.
				arrays[1] = wantArrays[r][1]
			}
			if d := cmp.Diff(wantArrays[r], arrays); d != "" {
				t.Errorf("row %d: arrays (-want +got):\n%s", r+1, d)
			}
		}
	}
}

// Access-pattern parameters are sampled as Stream reads their columns: a
// type read as text in its output function's text (10.1.2.3, 1 day
// 02:00:00), so that they render the keys the items have, not pgx's Go
// values (netip.Prefix, pgtype.Interval), which render none.
func TestSampleParamsInTextForm(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, textFormSQL)
	ctx := context.Background()
	src, err := extract.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close(ctx)
	if err := src.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := src.SampleParams(ctx, mapping.Source{Table: "tf"}, []string{"ip", "iv", "id", "ips"}, 10)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b []any) int { return int(a[2].(int32) - b[2].(int32)) })
	want := [][]any{
		{"10.1.2.3", "1 day 02:00:00", int32(1), []any{"10.1.2.3", nil, "::1"}},
		{"::1", "-3 mons", int32(2), []any{}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("sampled tuples (-want +got):\n%s", d)
	}
}
