package transform_test

import (
	"slices"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// TableKeys gives the keys Items puts (the item's and its mirror's), from
// the key columns alone; TableKeyColumns names those columns, and says
// when a key needs more than the row's own columns.
func TestTableKeys(t *testing.T) {
	cols := []extract.Column{{Name: "a", Type: "int4", PrimaryKey: true, KeyPos: 1}, {Name: "b", Type: "text"}, {Name: "c", Type: "text"}, {Name: "ts", Type: "timestamptz"}}
	p := compileFirst(t, `table: {name: tkeys}
entities:
  E:
    source: {table: t}
    pk: A#${a}
    sk: B#${b}
    mirror: {pk: "B#${b}", sk: "A#${a}"}
`, cols)
	b := transform.NewBuilder()
	row := []any{int32(7), "x", "unused", nil, "7"}
	items, err := b.Items(p, row, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want [][2]string
	for _, it := range items {
		want = append(want, transform.ItemKey(it.Attrs, [2]string{"PK", "SK"}))
	}
	got, err := b.TableKeys(p, []any{int32(7), "x", nil, nil})
	if err != nil || !slices.Equal(got, want) || len(got) != 2 {
		t.Errorf("TableKeys = %v, %v; want the keys Items puts, %v", got, err, want)
	}
	if _, err := b.TableKeys(p, []any{int32(7), nil, nil, nil}); err == nil {
		t.Error("TableKeys with a NULL key column: no error")
	}
	if kc, ok := p.TableKeyColumns(); !ok || !slices.Equal(kc, []string{"a", "b"}) {
		t.Errorf("TableKeyColumns = %v, %v; want [a b], true", kc, ok)
	}
	withID := compileFirst(t, `table: {name: tkeys}
entities:
  E:
    source: {table: t}
    pk: A#${a}
    sk: ${sid}
    ids: {sid: {kind: ksuid, time: ts, from: [a]}}
`, cols)
	if _, ok := withID.TableKeyColumns(); ok {
		t.Error("TableKeyColumns of a key with a stable ID: ok")
	}
}

// Shape tells a column retyped: one read by the same statement (int4 to
// text) changes Columns, not Query; a key column's changes Keys too. A
// shape recorded without Columns (an older checkpoint) is the same.
func TestShapeOfARetypedColumn(t *testing.T) {
	doc := `table: {name: shapes}
entities:
  E:
    source: {table: t}
    pk: A#${a}
    sk: B#${b}
`
	cols := func(b, c string) []extract.Column {
		return []extract.Column{{Name: "a", Type: "int4", PrimaryKey: true, KeyPos: 1}, {Name: "b", Type: b}, {Name: "c", Type: c}}
	}
	was := compileFirst(t, doc, cols("text", "int4")).Shape()
	retyped := compileFirst(t, doc, cols("text", "text")).Shape()
	key := compileFirst(t, doc, cols("varchar", "int4")).Shape()
	if retyped.Query != was.Query || retyped.Keys != was.Keys || retyped.Same(was) {
		t.Errorf("c retyped from int4 to text: shape %+v, was %+v; want the same Query and Keys, and not Same", retyped, was)
	}
	if key.Keys == was.Keys || key.Same(was) {
		t.Errorf("key column b retyped: shape %+v, was %+v; want other Keys", key, was)
	}
	old := was
	old.Columns = ""
	if !old.Same(was) || !was.Same(old) || !old.Same(retyped) {
		t.Errorf("a shape without Columns (%+v) is not the same as %+v", old, was)
	}
}

// A table without a sort key (sort_key: ""): the items, the mirror's
// included, carry the partition key alone, and TableKeys gives it with an
// empty sort key text, as ItemKey reads an item.
func TestNoSortKeyItems(t *testing.T) {
	cols := []extract.Column{{Name: "a", Type: "int4", PrimaryKey: true, KeyPos: 1}, {Name: "b", Type: "text"}}
	p := compileFirst(t, `table: {name: tkeys, sort_key: ""}
entities:
  E:
    source: {table: t}
    pk: A#${a}
    mirror: {pk: "B#${b}"}
`, cols)
	b := transform.NewBuilder()
	items, err := b.Items(p, []any{int32(7), "x", "7"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]string
	for _, it := range items {
		if _, ok := it.Attrs["SK"]; ok {
			t.Errorf("item %v has an SK", it.Attrs)
		}
		got = append(got, transform.ItemKey(it.Attrs, [2]string{"PK", ""}))
	}
	want := [][2]string{{"A#0000000007", ""}, {"B#x", ""}}
	if !slices.Equal(got, want) {
		t.Errorf("item keys = %v; want %v", got, want)
	}
	keys, err := b.TableKeys(p, []any{int32(7), "x"})
	if err != nil || !slices.Equal(keys, want) {
		t.Errorf("TableKeys = %v, %v; want %v", keys, err, want)
	}
}
