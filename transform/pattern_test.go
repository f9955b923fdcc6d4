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
