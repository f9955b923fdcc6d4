package transform_test

import (
	"testing"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// A pattern's parameter is rendered with the type of the column the
// queried attribute's template uses, so its padding matches the items even
// when another entity has a column of the same name and another type.
func TestPatternRendersLikeTheItems(t *testing.T) {
	m, err := mapping.Parse("p.yaml", []byte(`
table:
  name: pat
  gsis:
    - {name: Inverted, partition_key: SK, sort_key: PK}
entities:
  A:
    source: {table: a}
    pk: X
    sk: A#${id}
  B:
    source: {table: b}
    pk: X
    sk: B#${id}
access_patterns:
  OneB: {key_condition: "PK = X AND SK = B#${id}"}
  ByB: {index: Inverted, key_condition: "SK = B#${id}"}
  AllB: {key_condition: "PK = X AND begins_with(SK, '')"}
`))
	if err != nil {
		t.Fatal(err)
	}
	plans, err := transform.CompileAll(m, []*transform.Sources{
		{Columns: []extract.Column{{Name: "id", Type: "int2"}}},
		{Columns: []extract.Column{{Name: "id", Type: "int8"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	pa, pb := plans[0], plans[1]
	items, err := pb.Items([]any{int64(42)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	itemSK := items[0].Attrs["SK"]
	for i, want := range []string{"B#0000000000000000042", "B#0000000000000000042", ""} {
		ap := m.AccessPatterns[i]
		pp, err := transform.CompilePattern(m, ap, []*transform.Plan{pa, pb})
		if err != nil {
			t.Fatal(err)
		}
		var vals []any
		if len(pp.Params) > 0 {
			vals = []any{int64(42)}
		}
		pk, sk, err := pp.Render(vals)
		if err != nil {
			t.Fatalf("%s: %v", ap.Name, err)
		}
		got := pk
		if len(sk) > 0 {
			got = sk[0]
		}
		if ap.Name == "OneB" && got != want {
			t.Errorf("%s renders SK %q, want %q", ap.Name, got, want)
		}
		if ap.Name == "ByB" && pk != want {
			t.Errorf("%s renders the index partition key %q, want %q (the item has %v)", ap.Name, pk, want, itemSK)
		}
		if ap.Name == "AllB" && (len(sk) != 1 || sk[0] != "") {
			t.Errorf("%s: begins_with(SK, '') renders %q, want the empty prefix", ap.Name, sk)
		}
	}
}

// A pattern's Home, the entity verify samples its parameters from, is the
// one its key templates are written for: the entity that puts the
// parameter after the same text in the queried attribute, preferring one
// whose sort key starts with the pattern's literal sort prefix; not the
// first entity that merely has a column of that name.
func TestPatternHome(t *testing.T) {
	m, err := mapping.Parse("home.yaml", []byte(`
table:
  name: home
  gsis:
    - {name: GSI1, partition_key: GSI1PK, sort_key: GSI1SK}
entities:
  Customer:
    source: {table: customers}
    pk: CUSTOMER#${customer_id}
    sk: CUSTOMER#${customer_id}
  Note:
    source: {table: notes}
    pk: CUSTOMER#${customer_id}
    sk: NOTE#${note_id}
  Order:
    source: {table: orders}
    pk: ORDER#${order_id}
    sk: ORDER#${order_id}
    indexes:
      GSI1: {pk: "CUSTOMER#${customer_id}", sk: "ORDER#${order_id}"}
access_patterns:
  GetCustomer: {key_condition: "PK = CUSTOMER#${customer_id} AND SK = CUSTOMER#${customer_id}"}
  CustomerNotes: {key_condition: "PK = CUSTOMER#${customer_id} AND begins_with(SK, NOTE#)"}
  OrdersByCustomer: {index: GSI1, key_condition: "GSI1PK = CUSTOMER#${customer_id} AND begins_with(GSI1SK, ORDER#)"}
  ByOrderText: {key_condition: "PK = O#${order_id}"}
`))
	if err != nil {
		t.Fatal(err)
	}
	cols := func(names ...string) *transform.Sources {
		s := &transform.Sources{}
		for _, n := range names {
			s.Columns = append(s.Columns, extract.Column{Name: n, Type: "int4"})
		}
		return s
	}
	plans, err := transform.CompileAll(m, []*transform.Sources{cols("customer_id"), cols("note_id", "customer_id"), cols("order_id", "customer_id")})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{0, 1, 2, -1} {
		pp, err := transform.CompilePattern(m, m.AccessPatterns[i], plans)
		if err != nil {
			t.Fatal(err)
		}
		if pp.Home != want {
			t.Errorf("%s: Home %d, want %d", m.AccessPatterns[i].Name, pp.Home, want)
		}
	}
}
