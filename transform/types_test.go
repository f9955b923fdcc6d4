package transform_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv/prepare"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// TestTypes converts one value of each PostgreSQL type, read from a real
// server by package extract, and checks the attribute value — the README's
// type table, row by row.
func TestTypes(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TYPE mood AS ENUM ('sad', 'happy');
CREATE DOMAIN posint AS integer CHECK (VALUE > 0); CREATE DOMAIN small AS posint; CREATE DOMAIN cents AS numeric(10,2);
CREATE DOMAIN flag AS boolean; CREATE DOMAIN blob AS bytea; CREATE DOMAIN doc AS jsonb`)
	ctx := context.Background()
	src, err := extract.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close(ctx)

	cases := []struct {
		expr string
		want string // DynamoDB JSON of attribute v; "" for absent
		err  string // RowError reason, when the row is rejected
	}{
		{expr: "42::smallint", want: `{"N":"42"}`},
		{expr: "-7::integer", want: `{"N":"-7"}`},
		{expr: "9223372036854775807::bigint", want: `{"N":"9223372036854775807"}`},
		{expr: "'0012.500'::numeric", want: `{"N":"12.5"}`},
		{expr: "'-0.000'::numeric", want: `{"N":"0"}`},
		{expr: "'1e-5'::numeric", want: `{"N":"0.00001"}`},
		{expr: "'1e20'::numeric", want: `{"N":"100000000000000000000"}`},
		{expr: "'12345678901234567890123456789012345678'::numeric", want: `{"N":"12345678901234567890123456789012345678"}`},
		{expr: "'0.12345678901234567890123456789012345678'::numeric", want: `{"N":"0.12345678901234567890123456789012345678"}`},
		{expr: "'123456789012345678901234567890123456789'::numeric", err: "number with 39 significant digits: DynamoDB numbers hold at most 38"},
		{expr: "'NaN'::numeric", err: "NaN and Infinity are not DynamoDB numbers"},
		{expr: "0.1::real", want: `{"N":"0.1"}`},
		{expr: "1e-7::double precision", want: `{"N":"0.0000001"}`},
		{expr: "'-Infinity'::double precision", err: "NaN and Infinity are not DynamoDB numbers"},
		{expr: "'NaN'::real", err: "NaN and Infinity are not DynamoDB numbers"},
		{expr: "'héllo 日本'::text", want: `{"S":"héllo 日本"}`},
		{expr: "''::text", want: `{"S":""}`},
		{expr: "'ab'::varchar(10)", want: `{"S":"ab"}`},
		{expr: "'ab'::char(4)", want: `{"S":"ab  "}`},
		{expr: "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid", want: `{"S":"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"}`},
		{expr: "'happy'::mood", want: `{"S":"happy"}`},
		{expr: "true", want: `{"BOOL":true}`},
		{expr: `'\x0102ff'::bytea`, want: `{"B":"AQL/"}`},
		{expr: "'2024-02-29'::date", want: `{"S":"2024-02-29"}`},
		{expr: "'infinity'::date", err: "date infinity has no ISO-8601 form"},
		{expr: "'2024-01-02 03:04:05.123'::timestamp", want: `{"S":"2024-01-02T03:04:05.123"}`},
		{expr: "'2024-01-02 03:04:05'::timestamp", want: `{"S":"2024-01-02T03:04:05"}`},
		{expr: "'2024-01-02 03:04:05.000001+02'::timestamptz", want: `{"S":"2024-01-02T01:04:05.000001Z"}`},
		{expr: `'{"a": 1.50, "b": [true, null, "x"], "c": {"d": 12345678901234567890}}'::jsonb`,
			want: `{"M":{"a":{"N":"1.5"},"b":{"L":[{"BOOL":true},{"NULL":true},{"S":"x"}]},"c":{"M":{"d":{"N":"12345678901234567890"}}}}}`},
		{expr: "(repeat('[', 32) || '1' || repeat(']', 32))::jsonb", want: strings.Repeat(`{"L":[`, 32) + `{"N":"1"}` + strings.Repeat(`]}`, 32)},
		{expr: "(repeat('[', 33) || '1' || repeat(']', 33))::jsonb", err: "nested 33 levels deep: DynamoDB allows 32"},
		{expr: `'"\ud800"'::json`, err: `json: string escape \ud800 is a lone UTF-16 surrogate, which is no character: rejected, not replaced with U+FFFD`},
		{expr: `'[1e400]'::json`, err: "[0]: number of magnitude 1E+400: DynamoDB numbers range from 1E-130 to 9.99…E+125 in magnitude"},
		{expr: "'{1,NULL,3}'::integer[]", want: `{"L":[{"N":"1"},{"NULL":true},{"N":"3"}]}`},
		{expr: `'{"a b",c}'::text[]`, want: `{"L":[{"S":"a b"},{"S":"c"}]}`},
		{expr: "'{{1,2},{3,NULL}}'::integer[]", want: `{"L":[{"L":[{"N":"1"},{"N":"2"}]},{"L":[{"N":"3"},{"NULL":true}]}]}`},
		{expr: "'[0:1]={5,6}'::integer[]", want: `{"L":[{"N":"5"},{"N":"6"}]}`},
		{expr: "'{}'::text[]", want: `{"L":[]}`},
		{expr: "'{sad,happy}'::mood[]", want: `{"L":[{"S":"sad"},{"S":"happy"}]}`},
		// An array of a domain is an array of its base type.
		{expr: "'{{1,2},{3,NULL}}'::small[]", want: `{"L":[{"L":[{"N":"1"},{"N":"2"}]},{"L":[{"N":"3"},{"NULL":true}]}]}`},
		{expr: "'{1.10,2}'::cents[]", want: `{"L":[{"N":"1.1"},{"N":"2"}]}`},
		{expr: "'{t,f}'::flag[]", want: `{"L":[{"BOOL":true},{"BOOL":false}]}`},
		{expr: `'{"\\x00ff"}'::blob[]`, want: `{"L":[{"B":"AP8="}]}`},
		{expr: `ARRAY['{"a": 1}']::doc[]`, want: `{"L":[{"M":{"a":{"N":"1"}}}]}`},
		{expr: "'{1.10,NaN}'::numeric[]", err: "element 2: NaN and Infinity are not DynamoDB numbers"},
		{expr: "'1 day 02:00'::interval", want: `{"S":"1 day 02:00:00"}`},
		{expr: "'10.0.0.1/8'::inet", want: `{"S":"10.0.0.1/8"}`},
		{expr: "'10.1.2.3'::inet", want: `{"S":"10.1.2.3"}`},
		{expr: "'::1'::inet", want: `{"S":"::1"}`},
		{expr: "'10.1.2.0/24'::cidr", want: `{"S":"10.1.2.0/24"}`},
		{expr: "'{10.1.2.3,NULL}'::inet[]", want: `{"L":[{"S":"10.1.2.3"},{"NULL":true}]}`},
		{expr: "'13:14:15.5+02'::timetz", want: `{"S":"13:14:15.5+02"}`},
		{expr: "1234.5::money", want: `{"S":"$1,234.50"}`},
		{expr: "tstzrange('2024-01-02 03:04:05+02', '2024-01-03')", want: `{"S":"[\"2024-01-02 01:04:05+00\",\"2024-01-03 00:00:00+00\")"}`},
		{expr: "daterange('2024-01-02', NULL)", want: `{"S":"[2024-01-02,)"}`},
		{expr: "point(0.1, 2)", want: `{"S":"(0.1,2)"}`},
		{expr: "NULL::integer", want: ""},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			m, err := mapping.Parse("types.yaml", []byte(fmt.Sprintf(`
table: {name: types}
entities:
  T:
    source:
      query: |
        SELECT 1 AS id, %s AS v
    pk: T#${id}
    sk: T
`, tc.expr)))
			if err != nil {
				t.Fatal(err)
			}
			cols, err := src.Describe(ctx, m, m.Entities[0])
			if err != nil {
				t.Fatal(err)
			}
			plan, err := transform.Compile(m, 0, transform.Sources{Columns: cols})
			if err != nil {
				t.Fatal(err)
			}
			if err := src.Begin(ctx); err != nil {
				t.Fatal(err)
			}
			defer src.End(ctx)
			var item transform.Item
			var rowErr error
			err = src.Stream(ctx, "T", plan.Query(), func(values []any) error {
				var items []transform.Item
				items, rowErr = plan.Items(values, nil)
				if len(items) > 0 {
					item = items[0]
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if tc.err != "" {
				var re *transform.RowError
				if !errors.As(rowErr, &re) || re.Reason != tc.err || re.Column != "v" {
					t.Fatalf("got item %v, error %v; want rejection of column v: %s", item.Attrs, rowErr, tc.err)
				}
				return
			}
			if rowErr != nil {
				t.Fatal(rowErr)
			}
			got := ""
			if av, ok := item.Attrs["v"]; ok {
				got = testenv.CanonicalValue(av)
			}
			if got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// TestArraysThroughJoins: an array a duplicate copies or an embed's record
// carries keeps its dimensions, as an entity's own column does, and a
// multi-dimensional value listed in sets is rejected.
func TestArraysThroughJoins(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE p (id int PRIMARY KEY, grid int[], tags text[]);
CREATE TABLE c (id int PRIMARY KEY, p_id int NOT NULL, grid int[], label text);
INSERT INTO p VALUES (1, '{{1,2},{3,NULL}}', '{{a,b},{c,d}}'), (2, '{5}', NULL);
INSERT INTO c VALUES (10, 1, '{{1,2},{3,4}}', 'x'), (11, 1, NULL, 'y'), (12, 2, '[0:1]={7,8}', 'z')`)
	m := prepare.Mapping(t, "joins.yaml", `
table: {name: joins}
entities:
  P:
    source: {table: p}
    pk: P#${id}
    sk: P
    attributes: {select: [id]}
    embed:
      kids:
        source: {table: c}
        join: {p_id: id}
        order_by: [id]
        attributes: {select: [grid, label]}
  C:
    source: {table: c}
    pk: C#${id}
    sk: C
    attributes: {select: [id]}
    duplicate:
      - source: {table: p}
        join: {id: p_id}
        attributes: {select: [grid, tags], rename: {grid: parent_grid}}
  S:
    source: {table: c}
    pk: S#${id}
    sk: S
    attributes: {select: [id]}
    duplicate:
      - source: {table: p}
        join: {id: p_id}
        attributes: {select: [grid], sets: [grid]}
`)
	ctx := context.Background()
	src, plans := prepare.Source(t, url, m)
	got := map[string]string{}
	for _, p := range plans {
		err := src.Stream(ctx, p.Entity().Name, p.Query(), func(values []any) error {
			items, err := p.Items(values, nil)
			var re *transform.RowError
			if errors.As(err, &re) {
				got[fmt.Sprint(re.Entity, re.SourceKey["id"])] = "rejected: " + re.Reason
				return nil
			}
			for _, it := range items {
				delete(it.Attrs, "PK")
				delete(it.Attrs, "SK")
				delete(it.Attrs, "type")
				got[fmt.Sprint(p.Entity().Name, it.Attrs["id"].(*types.AttributeValueMemberN).Value)] = testenv.CanonicalValue(&types.AttributeValueMemberM{Value: it.Attrs})
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	nested := `{"L":[{"L":[{"N":"1"},{"N":"2"}]},{"L":[{"N":"3"},{"NULL":true}]}]}`
	want := map[string]string{
		"P1":  `{"M":{"id":{"N":"1"},"kids":{"L":[{"M":{"grid":{"L":[{"L":[{"N":"1"},{"N":"2"}]},{"L":[{"N":"3"},{"N":"4"}]}]},"label":{"S":"x"}}},{"M":{"label":{"S":"y"}}}]}}}`,
		"P2":  `{"M":{"id":{"N":"2"},"kids":{"L":[{"M":{"grid":{"L":[{"N":"7"},{"N":"8"}]},"label":{"S":"z"}}}]}}}`,
		"C10": `{"M":{"id":{"N":"10"},"parent_grid":` + nested + `,"tags":{"L":[{"L":[{"S":"a"},{"S":"b"}]},{"L":[{"S":"c"},{"S":"d"}]}]}}}`,
		"C11": `{"M":{"id":{"N":"11"},"parent_grid":` + nested + `,"tags":{"L":[{"L":[{"S":"a"},{"S":"b"}]},{"L":[{"S":"c"},{"S":"d"}]}]}}}`,
		"C12": `{"M":{"id":{"N":"12"},"parent_grid":{"L":[{"N":"5"}]}}}`,
		"S10": "rejected: duplicated from p: element 1 is an array: a multi-dimensional array cannot be a set",
		"S11": "rejected: duplicated from p: element 1 is an array: a multi-dimensional array cannot be a set",
		"S12": `{"M":{"grid":{"NS":["5"]},"id":{"N":"12"}}}`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("items (-want +got):\n%s", d)
	}
}
