package mapping

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// errorLines returns the lines of err's Errors, or fails t.
func errorLines(t *testing.T, err error) []string {
	t.Helper()
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error %v (%T), want Errors", err, err)
	}
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// One parse reports every problem the file holds, whatever its kind:
// values of the wrong type (each, not the first), unknown fields and the
// file's own checks, in file order. A value of the wrong type is left out,
// and what the checks would say of its absence is not said.
func TestParseReportsEveryKindAtOnce(t *testing.T) {
	text := `table:
  name: shop
  deletion_protection: maybe
entities:
  Customer:
    source: {table: customers}
    pk: CUSTOMER#${id}
    sk: CUSTOMER
    colour: red
    embed:
      orders: {source: {table: orders}, join: {customer_id: id}, max_items: ten}
    attributes: {select: [name, {email: 1}]}
  Order:
    source: orders
    pk: ORDER#${id
    sk: ORDER
`
	want := []string{
		`m.yaml:3:24: table.deletion_protection: expected true or false, got a string ("maybe")`,
		`m.yaml:9:5: entities.Customer.colour: unknown field "colour"; expected one of: source, pk, sk, indexes, attributes, type, embed, duplicate, aggregates, ids, mirror`,
		`m.yaml:11:77: entities.Customer.embed.orders.max_items: expected a whole number, got a string ("ten")`,
		`m.yaml:12:33: entities.Customer.attributes.select[1]: expected a string, got a mapping`,
		`m.yaml:14:13: entities.Order.source: expected a mapping, got a string ("orders")`,
		`m.yaml:15:15: entities.Order.pk: template "ORDER#${id": unclosed "${": expected "}" after the column name (at character 7)`,
	}
	_, err := Parse("m.yaml", []byte(text))
	if d := cmp.Diff(want, errorLines(t, err)); d != "" {
		t.Errorf("Parse errors (-want +got):\n%s", d)
	}

	m, err := ParsePartial(context.Background(), "m.yaml", []byte(text))
	if d := cmp.Diff(want, errorLines(t, err)); d != "" {
		t.Errorf("ParsePartial errors (-want +got):\n%s", d)
	}
	if m == nil {
		t.Fatal("ParsePartial returned no mapping")
	}
	if d := cmp.Diff(want, errorLines(t, m.Problems())); d != "" {
		t.Errorf("Problems (-want +got):\n%s", d)
	}
	// What the file defines is kept: the embed without its max_items,
	// the templates that parse.
	c := m.Entities[0]
	if em := c.Embed["orders"]; em == nil || em.Source.Table != "orders" || em.MaxItems != 0 {
		t.Errorf("embed orders = %+v, want its source and no max_items", em)
	}
	if got := c.PKTemplate.Columns(); !cmp.Equal(got, []string{"id"}) {
		t.Errorf("Customer's pk columns = %v, want [id]", got)
	}
	for path, want := range map[string]bool{
		"entities.Order.source":               true, // at a problem
		"entities.Order":                      true, // holding one
		"entities.Customer.embed.orders.join": false,
		"entities.Customer.embed.orders":      true,
		"entities.Customer.sk":                false,
		"entities.Customers":                  false, // not entities.Customer
		"entities":                            true,
	} {
		if got := m.Refused(path); got != want {
			t.Errorf("Refused(%q) = %v, want %v", path, got, want)
		}
	}
}

// Beside an unknown field, what is absent is not also reported missing:
// the field is most likely it, misspelt.
func TestUnknownFieldIsNotAlsoMissing(t *testing.T) {
	text := `table: {name: shop}
entities:
  Order:
    source: {tabel: orders}
    pk: ORDER#${id}
    sort_key: ORDER
`
	want := []string{
		`m.yaml:4:14: entities.Order.source.tabel: unknown field "tabel"; expected one of: schema, table, query`,
		`m.yaml:6:5: entities.Order.sort_key: unknown field "sort_key"; expected one of: source, pk, sk, indexes, attributes, type, embed, duplicate, aggregates, ids, mirror`,
	}
	_, err := Parse("m.yaml", []byte(text))
	if d := cmp.Diff(want, errorLines(t, err)); d != "" {
		t.Errorf("errors (-want +got):\n%s", d)
	}
}

// An anchor keeps its place when a value inside it is left out: its aliases
// still resolve. A field an alias brings where it is unknown is still an
// error (the decoder finds it; the AST walk sees the key at the anchor).
func TestPartialDecodingAndAliases(t *testing.T) {
	cases := []struct {
		name, text string
		want       []string
	}{
		{"a bad value in an anchor", `table: {name: shop}
entities:
  A:
    source: {table: a}
    pk: A#${id}
    sk: A
    embed:
      e: &rule {source: {table: b}, join: {a_id: id}, max_items: ten}
      f: *rule
`, []string{`m.yaml:8:66: entities.A.embed.e.max_items: expected a whole number, got a string ("ten")`}},
		{"a field an alias brings where it is unknown", `table: {name: shop}
entities:
  A:
    source: {table: a}
    pk: A#${id}
    sk: A
    embed:
      e: &rule {source: {table: b}, join: {a_id: id}, max_items: 3, attributes: {select: [x]}}
    duplicate:
      - *rule
`, []string{`m.yaml:8:55: entities.A.embed.e.max_items: field "max_items" is unknown where an alias of this value is used`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("m.yaml", []byte(tc.text))
			if d := cmp.Diff(tc.want, errorLines(t, err)); d != "" {
				t.Errorf("errors (-want +got):\n%s", d)
			}
		})
	}
}

// ParsePartial gives no mapping for a file it cannot decode: not YAML, not a
// mapping, or more values of the wrong type than it reports.
func TestParsePartialWithoutMapping(t *testing.T) {
	var many strings.Builder
	many.WriteString("table:\n  name: shop\n  gsis:\n")
	for i := range maxTypeErrors + 5 {
		fmt.Fprintf(&many, "    - {name: GSI%d, partition_key: P%d, read_capacity: x}\n", i, i)
	}
	many.WriteString("entities:\n  A: {source: {table: a}, pk: A, sk: A}\n")
	// A larger file is decoded again fewer times: at most maxDecodeBytes in all.
	big := many.String() + "# " + strings.Repeat("x", 150_000) + "\n"
	for name, tc := range map[string]struct {
		text  string
		count int
	}{
		"not YAML":           {"table: {name: shop\n", 1},
		"a list":             {"- table\n- entities\n", 1},
		"too many bad types": {many.String(), maxTypeErrors + 1},
		"a large file":       {big, maxDecodeBytes/len(big) + 1},
	} {
		t.Run(name, func(t *testing.T) {
			m, err := ParsePartial(context.Background(), "m.yaml", []byte(tc.text))
			if m != nil {
				t.Errorf("ParsePartial returned a mapping")
			}
			if got := errorLines(t, err); len(got) != tc.count {
				t.Errorf("%d errors, want %d:\n%s", len(got), tc.count, strings.Join(got, "\n"))
			}
		})
	}
}

// Checkable leaves out the rules the checks against the source cannot
// follow (refused at themselves, their source or their join), keeps the
// others and the duplicates' indexes, and gives an undefined stable ID an
// empty one; it leaves the parsed mapping as it was.
func TestCheckable(t *testing.T) {
	text := `table: {name: shop}
entities:
  A:
    source: {table: a}
    pk: A#${k}
    sk: A
    embed:
      kept: {source: {table: b}, join: {a_id: id}, max_items: ten}
      nosource: {source: {tabel: b}, join: {a_id: id}}
      badjoin: {source: {table: b}, join: [a_id]}
    aggregates:
      n: {function: count, source: {table: b}, join: {a_id: id}}
      bad: {function: count, source: {table: b}, join: {}}
    duplicate:
      - {source: {query: "SELECT 1"}, join: {id: p_id}, attributes: {select: [x]}}
      - {source: {table: p}, join: {id: p_id}, attributes: {select: [x]}}
    ids:
      k:
`
	m, _ := ParsePartial(context.Background(), "m.yaml", []byte(text))
	if m == nil {
		t.Fatal("no mapping")
	}
	c := m.Checkable().Entities[0]
	if got := slices.Sorted(maps.Keys(c.Embed)); !cmp.Equal(got, []string{"kept"}) {
		t.Errorf("embeds %v, want [kept]", got)
	}
	if got := slices.Sorted(maps.Keys(c.Aggregates)); !cmp.Equal(got, []string{"n"}) {
		t.Errorf("aggregates %v, want [n]", got)
	}
	if len(c.Duplicate) != 2 || c.Duplicate[0] != nil || c.Duplicate[1] == nil {
		t.Errorf("duplicates %v, want [nil, the second]", c.Duplicate)
	}
	if c.IDs["k"] == nil {
		t.Error("ID k is nil, want an empty one")
	}
	if e := m.Entities[0]; len(e.Embed) != 3 || e.Duplicate[0] == nil || e.IDs["k"] != nil {
		t.Error("Checkable changed the parsed mapping")
	}
	if m2, err := Parse("m.yaml", []byte("table: {name: shop}\nentities: {A: {source: {table: a}, pk: A, sk: A}}\n")); err != nil || m2.Checkable() != m2 {
		t.Errorf("Checkable of a mapping without problems is not itself (%v)", err)
	}
}
