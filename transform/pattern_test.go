package transform_test

import (
	"strings"
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

// begins_with in a filter takes a string prefix: a parameter whose column
// is written as binary (bytea) or a number is refused where the pattern
// is compiled against the source (pipeline.Prepare, before anything is
// written), with the pattern's filter as the error's location; a text
// column is taken.
func TestFilterBeginsWithTakesAStringColumn(t *testing.T) {
	for _, tc := range []struct{ typ, err string }{
		{"text", ""},
		{"bytea", `access_patterns.P.filter: begins_with(label, ${tag}): the parameter's column tag (bytea) is not written as a string`},
		{"int4", `the parameter's column tag (int4) is not written as a string`},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			m, err := mapping.Parse("f.yaml", []byte(`table: {name: filtered}
entities:
  A:
    source: {table: a}
    pk: A#${id}
    sk: A
access_patterns:
  P: {key_condition: "PK = A#${id}", filter: "begins_with(label, ${tag})"}
`))
			if err != nil {
				t.Fatal(err)
			}
			plans, err := transform.CompileAll(m, []*transform.Sources{{Columns: []extract.Column{
				{Name: "id", Type: "int4", PrimaryKey: true}, {Name: "tag", Type: tc.typ}}}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = transform.CompilePattern(m, m.AccessPatterns[0], plans)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want it to hold %q", err, tc.err)
			}
		})
	}
}
