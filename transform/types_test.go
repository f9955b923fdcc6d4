package transform_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// TestTypes converts one value of each PostgreSQL type, read from a real
// server by package extract, and checks the attribute value — the README's
// type table, row by row.
func TestTypes(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TYPE mood AS ENUM ('sad', 'happy');`)
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
