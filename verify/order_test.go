package verify

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

const eventsSQL = `
CREATE TYPE stage AS ENUM ('new', 'open', 'closed');
CREATE TABLE events (id integer PRIMARY KEY, at timestamptz NOT NULL, label text NOT NULL, st stage NOT NULL, pt point);`

const eventsMapping = `table: {name: events, gsis: [{name: ByLabel, partition_key: GSI1PK, sort_key: GSI1SK}]}
entities:
  AtEvent:
    source: {table: events}
    pk: E
    sk: T#${at}#${id}
  LabelEvent:
    source: {table: events}
    pk: L
    sk: L#${label}
    indexes: {ByLabel: {pk: "ALL", sk: "${label}"}}
  StageEvent:
    source: {table: events}
    pk: S
    sk: S#${st:0}
  PointEvent:
    source: {table: events}
    pk: P
    sk: P#${pt:0}
`

// orderSetup loads eventsMapping over an empty events table and returns
// an order checker on a source in its snapshot, with the plans.
func orderSetup(t *testing.T) (*orderChecker, []*transform.Plan) {
	t.Helper()
	ctx := context.Background()
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, eventsSQL)
	m, err := mapping.Parse("events.yaml", []byte(eventsMapping))
	if err != nil {
		t.Fatal(err)
	}
	src, err := extract.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close(context.Background()) })
	plans, err := pipeline.Prepare(ctx, src, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	return newOrderChecker(src, m, plans), plans
}

// answer builds a Query's answer along sortAttr by hand: one item of
// entity per sort key, in the order given, its row holding vals (column
// name → value as pgx decodes it) at the plan's column positions, and
// the values its order depends on taken from the row as the source pass
// takes them (orderChecker.values). The keys are written out here, not
// rendered by transform: the check must judge the order of any keys
// against PostgreSQL alone.
func answer(t *testing.T, oc *orderChecker, plans []*transform.Plan, entity int, sortAttr string, items ...struct {
	key  string
	vals map[string]any
}) []wantItem {
	t.Helper()
	cols := plans[entity].Query().Columns
	var out []wantItem
	for _, it := range items {
		row := make([]any, len(cols))
		for name, v := range it.vals {
			i := slices.IndexFunc(cols, func(c extract.Column) bool { return c.Name == name })
			if i < 0 {
				t.Fatalf("entity %d reads no column %s", entity, name)
			}
			row[i] = v
		}
		vals, err := oc.values(entity, false, sortAttr, row)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, wantItem{sort: it.key, item: []byte(it.key), entity: entity, vals: vals})
	}
	return out
}

type keyed = struct {
	key  string
	vals map[string]any
}

// The order check asks PostgreSQL how the source values sort and flags
// the first two items a Query returns against that order, whatever
// rendered their keys: timestamps whose text puts "Z" after "." (the
// rendering of 00:00:00 as "…00Z" and of 00:00:00.5 as "…00.5Z"), in
// either direction, and enum labels, which PostgreSQL orders as declared;
// a fixed-width rendering of the same instants passes, text compares by
// bytes (COLLATE "C"), items with equal sort keys are never out of order
// with each other, and a type PostgreSQL cannot order has no order to keep.
func TestOrderCheckAsksPostgreSQL(t *testing.T) {
	ctx := context.Background()
	midnight := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return midnight.Add(d) }
	ev := func(key string, id int32, ts time.Time) keyed {
		return keyed{key, map[string]any{"id": id, "at": ts}}
	}
	// As the key renderer writes these instants today: byte order.
	today := []keyed{
		ev("T#2024-01-01T00:00:00.000001Z#1", 1, at(time.Microsecond)),
		ev("T#2024-01-01T00:00:00.25Z#2", 2, at(250*time.Millisecond)),
		ev("T#2024-01-01T00:00:00.5Z#3", 3, at(500*time.Millisecond)),
		ev("T#2024-01-01T00:00:00Z#4", 4, at(0)),
		ev("T#2024-01-01T00:00:01Z#5", 5, at(time.Second)),
	}
	reversed := slices.Clone(today)
	slices.Reverse(reversed)
	fixed := []keyed{
		ev("T#2024-01-01T00:00:00.000000Z#4", 4, at(0)),
		ev("T#2024-01-01T00:00:00.000001Z#1", 1, at(time.Microsecond)),
		ev("T#2024-01-01T00:00:00.250000Z#2", 2, at(250*time.Millisecond)),
		ev("T#2024-01-01T00:00:00.500000Z#3", 3, at(500*time.Millisecond)),
		ev("T#2024-01-01T00:00:01.000000Z#5", 5, at(time.Second)),
	}
	label := func(key, l string) keyed { return keyed{key, map[string]any{"label": l}} }
	stage := func(st string) keyed { return keyed{"S#" + st, map[string]any{"st": st}} }
	item := func(pos int, key string, vals map[string]string) outcome.OrderedItem {
		return outcome.OrderedItem{Position: pos, Key: key, Values: vals}
	}
	tests := []struct {
		name     string
		entity   int
		sortAttr string
		desc     bool
		items    []keyed
		want     *outcome.OrderMismatch
	}{
		{
			name: "timestamptz rendered with a bare Z", entity: 0, sortAttr: "SK", items: today,
			want: &outcome.OrderMismatch{Entity: "AtEvent", SortKey: "SK", Template: "T#${at}#${id}", OrderBy: "at, id",
				First:  item(3, "T#2024-01-01T00:00:00.5Z#3", map[string]string{"at": "2024-01-01 00:00:00.5+00", "id": "3"}),
				Second: item(4, "T#2024-01-01T00:00:00Z#4", map[string]string{"at": "2024-01-01 00:00:00+00", "id": "4"})},
		},
		{
			name: "timestamptz with a bare Z, read backwards", entity: 0, sortAttr: "SK", desc: true, items: reversed,
			want: &outcome.OrderMismatch{Entity: "AtEvent", SortKey: "SK", Template: "T#${at}#${id}", OrderBy: "at DESC, id DESC",
				First:  item(2, "T#2024-01-01T00:00:00Z#4", map[string]string{"at": "2024-01-01 00:00:00+00", "id": "4"}),
				Second: item(3, "T#2024-01-01T00:00:00.5Z#3", map[string]string{"at": "2024-01-01 00:00:00.5+00", "id": "3"})},
		},
		{name: "timestamptz with fixed-width microseconds", entity: 0, sortAttr: "SK", items: fixed},
		{name: "no sort key: no order to check", entity: 0, sortAttr: "", items: today},
		{
			// "B" < "a" in bytes, "a" < "B" in most natural-language collations.
			name: "text compares by bytes", entity: 1, sortAttr: "SK",
			items: []keyed{label("L#B", "B"), label("L#a", "a"), label("L#b", "b")},
		},
		{
			name: "text in bytes, a mismatch named with COLLATE", entity: 1, sortAttr: "SK",
			items: []keyed{label("L#a", "a"), label("L#B", "B")},
			want: &outcome.OrderMismatch{Entity: "LabelEvent", SortKey: "SK", Template: "L#${label}", OrderBy: `label COLLATE "C"`,
				First:  item(1, "L#a", map[string]string{"label": "a"}),
				Second: item(2, "L#B", map[string]string{"label": "B"})},
		},
		{
			// A GSI may hold equal sort keys; they come back in no order.
			name: "equal sort keys are ties", entity: 1, sortAttr: "GSI1SK",
			items: []keyed{label("a", "a"), label("same", "c"), label("same", "b"), label("z", "z")},
		},
		{
			name: "an equal-key run still has to follow the item before it", entity: 1, sortAttr: "GSI1SK",
			items: []keyed{label("a", "m"), label("same", "c"), label("same", "x")},
			want: &outcome.OrderMismatch{Entity: "LabelEvent", SortKey: "GSI1SK", Template: "${label}", OrderBy: `label COLLATE "C"`,
				First:  item(1, "a", map[string]string{"label": "m"}),
				Second: item(2, "same", map[string]string{"label": "c"})},
		},
		{
			name: "enum labels sort as declared, not as text", entity: 2, sortAttr: "SK",
			items: []keyed{stage("closed"), stage("new"), stage("open")},
			want: &outcome.OrderMismatch{Entity: "StageEvent", SortKey: "SK", Template: "S#${st:0}", OrderBy: "st",
				First:  item(1, "S#closed", map[string]string{"st": "closed"}),
				Second: item(2, "S#new", map[string]string{"st": "new"})},
		},
		{
			name: "enum labels in declared order", entity: 2, sortAttr: "SK",
			items: []keyed{stage("new"), stage("open"), stage("closed")},
		},
		{
			// point has no ordering in PostgreSQL: nothing to keep.
			name: "a type without an order", entity: 3, sortAttr: "SK",
			items: []keyed{{"P#(2,2)", map[string]any{"pt": "(2,2)"}}, {"P#(1,1)", map[string]any{"pt": "(1,1)"}}},
		},
	}
	// PostgreSQL ranks a chunk of items at a time, with the items carried
	// over from the chunk before: any chunk size gives the same verdict.
	// (A source each: the type without an order, last, fails its
	// transaction.)
	for _, chunk := range []int{orderChunk, 1, 2, 3} {
		oc, plans := orderSetup(t)
		oc.chunk = chunk
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%s, chunks of %d", tc.name, chunk), func(t *testing.T) {
				got, err := oc.check(ctx, answer(t, oc, plans, tc.entity, tc.sortAttr, tc.items...), tc.sortAttr, tc.desc)
				if err != nil {
					t.Fatal(err)
				}
				if d := gocmp.Diff(tc.want, got); d != "" {
					t.Errorf("mismatch (-want +got):\n%s", d)
				}
			})
		}
	}
}

// Items of different entities, or an entity's item and its mirror, are
// ordered by different templates: the check compares each group apart.
func TestOrderCheckGroupsByEntity(t *testing.T) {
	ctx := context.Background()
	oc, plans := orderSetup(t)
	// Alternating entities: each entity's own items are in order.
	items := append(answer(t, oc, plans, 1, "SK", keyed{"L#a", map[string]any{"label": "a"}}),
		answer(t, oc, plans, 2, "SK", keyed{"S#open", map[string]any{"st": "open"}})...)
	items = append(items, answer(t, oc, plans, 1, "SK", keyed{"L#b", map[string]any{"label": "b"}})...)
	items = append(items, answer(t, oc, plans, 2, "SK", keyed{"S#closed", map[string]any{"st": "closed"}})...)
	if got, err := oc.check(ctx, items, "SK", false); err != nil || got != nil {
		t.Fatalf("got %+v, %v; want no mismatch", got, err)
	}
}
