package transform_test

import (
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// benchCols is a ~1 KB row of the types a ticket has.
var benchCols = []extract.Column{
	{Name: "ticket_id", Type: "int8", KeyPos: 1, PrimaryKey: true},
	{Name: "org_id", Type: "int4"},
	{Name: "user_id", Type: "int8"},
	{Name: "subject", Type: "text"},
	{Name: "status", Type: "ticket_status", AsText: true},
	{Name: "priority", Type: "int2"},
	{Name: "amount", Type: "numeric"},
	{Name: "created_at", Type: "timestamptz"},
	{Name: "tags", Type: "text", Array: true},
	{Name: "metadata", Type: "jsonb", AsText: true},
	{Name: "body", Type: "text"},
}

func benchRow() []any {
	body := make([]byte, 640)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	return []any{int64(1881), int32(7), int64(21), "Export to CSV times out on large reports", "open", int16(3),
		pgtype.Numeric{Int: big.NewInt(123456), Exp: -2, Valid: true}, time.Date(2025, 12, 13, 2, 38, 29, 287632000, time.UTC),
		[]any{"sla", "login"}, `{"channel": "api", "sla_hours": 4, "related": [759, 760]}`, string(body)}
}

// positions are the values a row of p ends with when p reads in
// primary-key order: its position, one text per key column.
func positions(p *transform.Plan) []any {
	out := make([]any, len(p.Query().OrderBy))
	for i := range out {
		out[i] = "1"
	}
	return out
}

// benchKeys are the keys of BenchmarkItems: a partition and a sort key,
// and a GSI's two, the GSI's sort key repeating the table's.
const benchKeys = `    pk: USER#${user_id}
    sk: TICKET#${created_at}#${ticket_id}
    indexes:
      GSI1: {pk: "ORG#${org_id}", sk: "TICKET#${created_at}#${ticket_id}"}`

// benchPlan is the plan of BenchmarkItems: benchKeys, every column.
func benchPlan(b testing.TB) *transform.Plan { return benchPlanOf(b, benchKeys, "") }

// BenchmarkItems converts one ~1 KB row into its item with a Builder, as
// the pipeline's readers do: key rendering (two keys and two GSI keys),
// type conversion of every column, the size check.
func BenchmarkItems(b *testing.B) { benchItems(b, benchPlan(b)) }

// BenchmarkPlanItems is BenchmarkItems through Plan.Items, which takes a
// Builder from a pool for each row.
func BenchmarkPlanItems(b *testing.B) {
	p := benchPlan(b)
	benchLoop(b, p, p.Items)
}

// BenchmarkItemsReference is BenchmarkItems through the code Builder
// replaced (kept in reference_test.go), the baseline to compare with in
// the same run.
func BenchmarkItemsReference(b *testing.B) {
	p := benchPlan(b)
	benchLoop(b, p, func(row []any, dst []transform.Item) ([]transform.Item, error) {
		return transform.ReferenceItems(p, row, dst)
	})
}

// BenchmarkCanonicalNumber converts numeric text to DynamoDB's form.
func BenchmarkCanonicalNumber(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := transform.CanonicalNumber("-0001234.567800e2"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestItemsAllocs guards what BenchmarkItems measures: a Builder converts
// the ~1 KB row with a handful of allocations (the item's map, the json
// map, the row's text), whatever the machine's speed.
func TestItemsAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	p := benchPlan(t)
	row := append(benchRow(), positions(p)...)
	bld := transform.NewBuilder()
	var buf []transform.Item
	allocs := testing.AllocsPerRun(2000, func() {
		var err error
		if buf, err = bld.Items(p, row, buf[:0]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 10 {
		t.Errorf("%.1f allocations a row, want at most 10", allocs)
	}
}

// benchPlanOf compiles one entity of the bench table (benchCols) with the
// given keys and attribute selection (YAML flow text; "" for every column).
func benchPlanOf(b testing.TB, keys, attributes string) *transform.Plan {
	if attributes != "" {
		attributes = "\n    attributes: " + attributes
	}
	return compileFirst(b, `
table:
  name: bench
  gsis:
    - {name: GSI1, partition_key: GSI1PK, sort_key: GSI1SK}
entities:
  Ticket:
    source: {table: tickets}
`+keys+attributes+"\n", benchCols)
}

// BenchmarkKeys renders keys only (one attribute kept, the smallest):
// literal keys as the baseline, then templates with integer, padded and
// timestamp placeholders, and the four keys BenchmarkItems renders.
// Subtract "literal" to get the rendering itself.
func BenchmarkKeys(b *testing.B) {
	const attrs = "{select: [priority]}"
	for _, tc := range []struct{ name, keys string }{
		{"literal", "    pk: T\n    sk: T"},
		{"int", "    pk: USER#${user_id}\n    sk: T"},
		{"padded-sort-key", "    pk: T\n    sk: TICKET#${ticket_id}"},
		{"timestamp", "    pk: T\n    sk: TICKET#${created_at}"},
		{"four-keys", benchKeys},
	} {
		b.Run(tc.name, func(b *testing.B) { benchItems(b, benchPlanOf(b, tc.keys, attrs)) })
	}
}

// BenchmarkConvert converts one column of each type of the bench row into
// its attribute value, keys literal: "none" (no column) is the baseline to
// subtract.
func BenchmarkConvert(b *testing.B) {
	const keys = "    pk: T\n    sk: T"
	for _, tc := range []struct{ name, attrs string }{
		{"none", "{select: [priority]}"},
		{"int8", "{select: [priority, ticket_id]}"},
		{"numeric", "{select: [priority, amount]}"},
		{"timestamptz", "{select: [priority, created_at]}"},
		{"text-40B", "{select: [priority, subject]}"},
		{"text-640B", "{select: [priority, body]}"},
		{"text-array", "{select: [priority, tags]}"},
		{"jsonb", "{select: [priority, metadata]}"},
	} {
		b.Run(tc.name, func(b *testing.B) { benchItems(b, benchPlanOf(b, keys, tc.attrs)) })
	}
}

// benchLoop converts the bench row (the columns p reads) with items, once
// per op, reporting allocations and the item's size.
func benchLoop(b *testing.B, p *transform.Plan, items func(row []any, dst []transform.Item) ([]transform.Item, error)) {
	full := benchRow()
	var row []any
	for _, c := range p.Query().Columns {
		i := slices.IndexFunc(benchCols, func(bc extract.Column) bool { return bc.Name == c.Name })
		row = append(row, full[i])
	}
	row = append(row, positions(p)...)
	var buf []transform.Item
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = items(row, buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(transform.ItemSize(buf[0].Attrs)), "item-bytes")
}

// benchItems is benchLoop with one Builder.
func benchItems(b *testing.B, p *transform.Plan) {
	bld := transform.NewBuilder()
	benchLoop(b, p, func(row []any, dst []transform.Item) ([]transform.Item, error) { return bld.Items(p, row, dst) })
}

// stableKeys render the same text under the key rules before and after
// issue 11 (integers padded in sort keys, plain with :0; no time in a key),
// so that BenchmarkItemsStableKeys compares the key renderers alone across
// versions: BenchmarkItems' keys grew with the rules (every number padded,
// six fraction digits in times).
const stableKeys = `    pk: USER#${user_id:0}
    sk: TICKET#${ticket_id}
    indexes:
      GSI1: {pk: "ORG#${org_id:0}", sk: "TICKET#${ticket_id}"}`

// BenchmarkItemsStableKeys is BenchmarkItems with stableKeys.
func BenchmarkItemsStableKeys(b *testing.B) { benchItems(b, benchPlanOf(b, stableKeys, "")) }
