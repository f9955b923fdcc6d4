package transform_test

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// keyCols are the columns of the key tests' source, as extract describes them.
var keyCols = []extract.Column{
	{Name: "org", Type: "text"},
	{Name: "id", Type: "int4"},
	{Name: "small", Type: "int2"},
	{Name: "big", Type: "int8"},
	{Name: "ts", Type: "timestamptz"},
	{Name: "amount", Type: "numeric", IntDigits: 10, Precision: 12, Scale: 2},
}

// keysHead is the mapping every key test extends with one entity.
const keysHead = `
table:
  name: keys
  gsis:
    - {name: GSI1, partition_key: GSI1PK, sort_key: GSI1SK}
entities:
`

func compileKeys(t *testing.T, entity string) *transform.Plan {
	t.Helper()
	return compileFirst(t, keysHead+entity, keyCols)
}

// compileFirst parses mapping text doc and compiles its first entity over
// a source of columns cols.
func compileFirst(tb testing.TB, doc string, cols []extract.Column) *transform.Plan {
	tb.Helper()
	m, err := mapping.Parse("test.yaml", []byte(doc))
	if err != nil {
		tb.Fatal(err)
	}
	p, err := transform.Compile(m, 0, transform.Sources{Columns: cols})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestKeyRendering(t *testing.T) {
	cases := []struct {
		name   string
		entity string
		row    []any // org, id, small, big, ts (only the columns the plan reads)
		want   map[string]string
	}{
		{
			name: "an integer column is zero-padded to its type's width in every key",
			entity: `  E:
    source: {table: t}
    pk: ORG#${org}#${id}
    sk: ID#${id}#${small}#${big}
    attributes: {select: [org]}`,
			row:  []any{"acme", int32(42), int16(7), int64(1001)},
			want: map[string]string{"PK": "ORG#acme#0000000042", "SK": "ID#0000000042#00007#0000000000000001001"},
		},
		{
			name: "numeric(p,s) has p-s digits and s decimals",
			entity: `  E:
    source: {table: t}
    pk: X
    sk: AMT#${amount}
    attributes: {select: [org]}`,
			row:  []any{"x", pgtype.Numeric{Int: big.NewInt(125), Exp: -1, Valid: true}},
			want: map[string]string{"PK": "X", "SK": "AMT#0000000012.50"},
		},
		{
			name: "a negative number is the nines' complement of its padded digits",
			entity: `  E:
    source: {table: t}
    pk: X
    sk: AMT#${amount}#${id:4}
    attributes: {select: [org]}`,
			row:  []any{"x", int32(-42), pgtype.Numeric{Int: big.NewInt(-125), Exp: -1, Valid: true}},
			want: map[string]string{"PK": "X", "SK": "AMT#-9999999987.49#-9957"},
		},
		{
			name: "an explicit width applies to every use of the column",
			entity: `  E:
    source: {table: t}
    pk: ID#${id:6}
    sk: ID#${id}
    attributes: {select: [id]}`,
			row:  []any{int32(42)},
			want: map[string]string{"PK": "ID#000042", "SK": "ID#000042"},
		},
		{
			name: "width 0 writes a sorted number plainly",
			entity: `  E:
    source: {table: t}
    pk: X
    sk: ID#${id:0}
    attributes: {select: [id]}`,
			row:  []any{int32(-42)},
			want: map[string]string{"PK": "X", "SK": "ID#-42"},
		},
		{
			name: "a number is padded in a partition key too",
			entity: `  E:
    source: {table: t}
    pk: ID#${id}
    sk: ORG#${org}
    attributes: {select: [id]}`,
			row:  []any{"acme", int32(-42)},
			want: map[string]string{"PK": "ID#-9999999957", "SK": "ORG#acme"},
		},
		{
			name: "times in keys carry six fraction digits",
			entity: `  E:
    source: {table: t}
    pk: X
    sk: AT#${ts}
    attributes: {select: [org]}`,
			row:  []any{"x", time.Date(2024, 1, 2, 3, 4, 5, 500_000_000, time.UTC)},
			want: map[string]string{"PK": "X", "SK": "AT#2024-01-02T03:04:05.500000Z"},
		},
		{
			name: "GSI keys are rendered from their own templates",
			entity: `  E:
    source: {table: t}
    pk: ORG#${org}
    sk: ID#${id}
    indexes:
      GSI1: {pk: "ID#${id}", sk: "ORG#${org}"}
    attributes: {select: [org]}`,
			row:  []any{"acme", int32(1)},
			want: map[string]string{"PK": "ORG#acme", "SK": "ID#0000000001", "GSI1PK": "ID#0000000001", "GSI1SK": "ORG#acme"},
		},
		{
			name: "a sparse index is left out when its column is NULL",
			entity: `  E:
    source: {table: t}
    pk: ID#${id}
    sk: ID
    indexes:
      GSI1: {pk: "ORG#${org}", sk: "ID#${id}", sparse: true}
    attributes: {select: [id]}`,
			row:  []any{nil, int32(1)},
			want: map[string]string{"PK": "ID#0000000001", "SK": "ID"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := compileKeys(t, tc.entity)
			items, err := p.Items(tc.row[:len(p.Query().Columns)], nil)
			if err != nil {
				t.Fatal(err)
			}
			it := items[0]
			got := map[string]string{}
			for _, a := range []string{"PK", "SK", "GSI1PK", "GSI1SK"} {
				if av, ok := it.Attrs[a]; ok {
					got[a] = strings.Trim(testenv.CanonicalValue(av), `{}"S:`)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("keys (-want +got):\n%s", d)
			}
		})
	}
}

func TestKeyRejections(t *testing.T) {
	cases := []struct {
		name   string
		entity string
		row    []any
		want   transform.RowError
	}{
		{
			name: "NULL in a partition key column",
			entity: `  E:
    source: {table: t}
    pk: ORG#${org}
    sk: ID#${id}`,
			row: []any{nil, int32(5), int16(0), int64(0), nil, nil},
			want: transform.RowError{Entity: "E", SourceKey: map[string]any{"org": nil, "id": "5"}, Column: "org",
				Reason: `NULL in key attribute PK (template "ORG#${org}")`},
		},
		{
			name: "NULL in a non-sparse GSI key column",
			entity: `  E:
    source: {table: t}
    pk: ID#${id}
    sk: ID
    indexes:
      GSI1: {pk: "ORG#${org}", sk: "ID"}
    attributes: {select: [id]}`,
			row: []any{nil, int32(5)},
			want: transform.RowError{Entity: "E", SourceKey: map[string]any{"id": "5"}, Column: "org",
				Reason: `NULL in key attribute GSI1PK (template "ORG#${org}")`},
		},
		{
			name: "an empty key in a sparse index is rejected, not left out",
			entity: `  E:
    source: {table: t}
    pk: ID#${id}
    sk: ID
    indexes:
      GSI1: {pk: "${org}", sk: "X", sparse: true}
    attributes: {select: [id]}`,
			row: []any{"", int32(5)},
			want: transform.RowError{Entity: "E", SourceKey: map[string]any{"id": "5"},
				Reason: `key attribute GSI1PK renders empty (template "${org}"): DynamoDB keys must not be empty`},
		},
		{
			name: "text that is not UTF-8",
			entity: `  E:
    source: {table: t}
    pk: ORG#${org}
    sk: X`,
			row: []any{"caf\xe9", int32(1), int16(0), int64(0), nil, nil},
			want: transform.RowError{Entity: "E", SourceKey: map[string]any{"org": "caf\xe9"}, Column: "org",
				Reason: "key attribute PK: text is not valid UTF-8 (is the database encoding SQL_ASCII?)"},
		},
		{
			name: "a key that renders empty",
			entity: `  E:
    source: {table: t}
    pk: ${org}
    sk: ID#${id}
    attributes: {select: [id]}`,
			row: []any{"", int32(5)},
			want: transform.RowError{Entity: "E", SourceKey: map[string]any{"org": "", "id": "5"},
				Reason: `key attribute PK renders empty (template "${org}"): DynamoDB keys must not be empty`},
		},
		{
			name: "a partition key over 2048 bytes",
			entity: `  E:
    source: {table: t}
    pk: ${org}
    sk: ID#${id}
    attributes: {select: [id]}`,
			row: []any{strings.Repeat("x", 2049), int32(5)},
			want: transform.RowError{Entity: "E", SourceKey: map[string]any{"org": strings.Repeat("x", 2049), "id": "5"},
				Reason: "key attribute PK is 2049 bytes: DynamoDB allows at most 2048"},
		},
		{
			name: "a sort key over 1024 bytes",
			entity: `  E:
    source: {table: t}
    pk: ID#${id}
    sk: ${org}
    attributes: {select: [id]}`,
			row: []any{strings.Repeat("é", 513), int32(5)},
			want: transform.RowError{Entity: "E", SourceKey: map[string]any{"org": strings.Repeat("é", 513), "id": "5"},
				Reason: "key attribute SK is 1026 bytes: DynamoDB allows at most 1024"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := compileKeys(t, tc.entity)
			items, err := p.Items(tc.row[:len(p.Query().Columns)], nil)
			var re *transform.RowError
			if !errors.As(err, &re) {
				t.Fatalf("got items %v, error %v; want a RowError", items, err)
			}
			if d := cmp.Diff(tc.want, *re); d != "" {
				t.Errorf("RowError (-want +got):\n%s", d)
			}
		})
	}
}

// Compile refuses, with the mapping path, what cannot work on these columns.
func TestCompileErrors(t *testing.T) {
	cases := []struct{ entity, want string }{
		{`  E:
    source: {table: t}
    pk: ORG#${orgg}
    sk: X`, `keys.yaml:9:9: entities.E.pk: unknown column "orgg" (did you mean "org"?); t has columns: org, id, small, big, ts, amount, price, mood, total`},
		{`  E:
    source: {table: t}
    pk: X
    sk: X
    attributes: {rename: {org: PK}}`, `keys.yaml:11:32: entities.E.attributes.rename.org: attribute name "PK" is a key or type attribute of the table: choose another name`},
		{`  E:
    source: {table: t}
    pk: X
    sk: X
    attributes: {select: [id, nope]}`, `keys.yaml:11:31: entities.E.attributes.select[1]: unknown column "nope"; t has columns: org, id, small, big, ts, amount, price, mood, total`},
		{`  E:
    source: {table: t}
    pk: ID#${id:6}
    sk: ID#${id:8}`, `keys.yaml:10:9: entities.E.sk: ${id:8}: entities.E.pk gives id the width 6; a column renders one text in every key: give it one width`},
		{`  E:
    source: {table: t}
    pk: X
    sk: P#${price}`, `keys.yaml:10:9: entities.E.sk: column "price" of type float8 has no key text that sorts in numeric order, and SK sorts by it: cast it to numeric(p,s) in a query source, or write ${price:0} for its plain text (verify then fails a pattern whose order differs from PostgreSQL's)`},
		{`  E:
    source: {table: t}
    pk: X
    sk: M#${mood}`, `keys.yaml:10:9: entities.E.sk: column "mood" of type mood (read as text) does not sort by its text in PostgreSQL, and SK sorts by it: cast it to text in a query source (mood::text) if text order is what you want, or write ${mood:0} for its plain text (verify then fails a pattern whose order differs from PostgreSQL's)`},
		{`  E:
    source: {table: t}
    pk: X
    sk: T#${total}`, `keys.yaml:10:9: entities.E.sk: column "total" is numeric without a declared precision and scale, so its key text cannot sort in numeric order, and SK sorts by it: declare it numeric(p,s), read it through a query source with a cast (total::numeric(18,4)), or write ${total:0} for its plain text (verify then fails a pattern whose order differs from PostgreSQL's)`},
		{`  E:
    source: {table: t}
    pk: X
    sk: X
    indexes:
      GSI1: {pk: "P#${price}", sk: "T#${total:0}#${mood:0}"}`, ``},
	}
	for _, tc := range cases {
		m, err := mapping.Parse("keys.yaml", []byte(keysHead+tc.entity))
		if err == nil {
			_, err = transform.Compile(m, 0, transform.Sources{Columns: append(slices.Clip(keyCols),
				extract.Column{Name: "price", Type: "float8"}, extract.Column{Name: "mood", Type: "mood", AsText: true},
				extract.Column{Name: "total", Type: "numeric"})})
		}
		if got := fmt.Sprint(err); err == nil && tc.want != "" || err != nil && got != tc.want {
			t.Errorf("got error:\n%v\nwant:\n%s", err, tc.want)
		}
	}
}

// Two entities that put numbers after the same key prefix must render them
// alike, or the item collection splits: CUSTOMER#000042 (Customer) and
// CUSTOMER#0000000042 (Order) would never meet.
func TestCollectionPrefixesAgree(t *testing.T) {
	m, err := mapping.Parse("c.yaml", []byte(`
table: {name: shop}
entities:
  Customer: {source: {table: customers}, pk: "CUSTOMER#${id:6}", sk: PROFILE}
  Order: {source: {table: orders}, pk: "CUSTOMER#${customer_id}", sk: "ORDER#${id}"}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = transform.CompileAll(m, []*transform.Sources{
		{Columns: []extract.Column{{Name: "id", Type: "int4"}}},
		{Columns: []extract.Column{{Name: "id", Type: "int4"}, {Name: "customer_id", Type: "int4"}}},
	})
	want := `c.yaml:5:40: entities.Order.pk: CUSTOMER#${customer_id} renders 10 digits; entities.Customer.pk renders CUSTOMER#${id} as 6 digits: the same key prefix with numbers of two widths splits what belongs together; give them one width`
	if fmt.Sprint(err) != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
