package transform_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// compileErrors compiles the entities of mapping text doc over srcs and
// returns the lines of the mapping errors (nil when it compiles).
func compileErrors(t *testing.T, doc string, srcs ...*transform.Sources) []string {
	t.Helper()
	m, err := mapping.Parse("m.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	_, err = transform.CompileAll(m, srcs)
	if err == nil {
		return nil
	}
	var errs mapping.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("CompileAll: %v, want mapping errors", err)
	}
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// Past an unknown column, compile goes on: the types of the key columns it
// knows, and the item collections of the entities that compiled, are
// checked in the same run.
func TestCompileReportsUnknownColumnsAndTypesTogether(t *testing.T) {
	doc := `table: {name: shop}
entities:
  Customer:
    source: {table: customers}
    pk: CUSTOMER#${customer_idd}
    sk: PROFILE#${tags}
    attributes: {select: [name, emial]}
  Order:
    source: {table: orders}
    pk: CUSTOMER#${customer_id:6}
    sk: ORDER#${id}
  Note:
    source: {table: notes}
    pk: CUSTOMER#${customer_id}
    sk: NOTE#${id}
`
	customers := &transform.Sources{Columns: []extract.Column{{Name: "customer_id", Type: "int4", PrimaryKey: true},
		{Name: "name", Type: "text"}, {Name: "email", Type: "text"}, {Name: "tags", Type: "text", Array: true}}}
	withCustomer := &transform.Sources{Columns: []extract.Column{{Name: "id", Type: "int4", PrimaryKey: true}, {Name: "customer_id", Type: "int4"}}}
	want := []string{
		`m.yaml:5:9: entities.Customer.pk: unknown column "customer_idd" (did you mean "customer_id"?); customers has columns: customer_id, name, email, tags`,
		`m.yaml:6:9: entities.Customer.sk: column "tags" of type text[] cannot be part of a key: expected a number, string, uuid, boolean, date or timestamp column`,
		`m.yaml:7:33: entities.Customer.attributes.select[1]: unknown column "emial" (did you mean "email"?); customers has columns: customer_id, name, email, tags`,
		`m.yaml:14:9: entities.Note.pk: CUSTOMER#${customer_id} renders 10 digits; entities.Order.pk renders CUSTOMER#${customer_id} as 6 digits: the same key prefix with numbers of two widths splits what belongs together; give them one width`,
	}
	if d := cmp.Diff(want, compileErrors(t, doc, customers, withCustomer, withCustomer)); d != "" {
		t.Errorf("errors (-want +got):\n%s", d)
	}
}

// A rule the mapping's own problems leave undefined (nil, as
// mapping.ParsePartial leaves it) is left out; the rest is compiled.
func TestCompileLeavesOutNilRules(t *testing.T) {
	doc := `table: {name: shop}
entities:
  Order:
    source: {table: orders}
    pk: ORDER#${id}
    sk: ORDER
    embed:
      lines: {source: {table: lines}, join: {order_id: id}}
    aggregates:
      n: {function: count, source: {table: lines}, join: {order_id: id}}
    duplicate:
      - {source: {table: customers}, join: {id: customer_id}, attributes: {select: [name]}}
    ids:
      k: {kind: ksuid, time: ts, from: [id]}
`
	m, err := mapping.Parse("m.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	e := m.Entities[0]
	e.Embed["lines"], e.Aggregates["n"], e.Duplicate[0], e.IDs["k"] = nil, nil, nil, nil
	cols := []extract.Column{{Name: "id", Type: "int4", PrimaryKey: true}, {Name: "nope", Type: "text"}}
	_, err = transform.CompileAll(m, []*transform.Sources{{Columns: cols, Duplicate: [][]extract.Column{nil}, DuplicateKeys: [][]extract.UniqueKey{nil}}})
	if err != nil {
		t.Errorf("CompileAll: %v, want the entity compiled without its rules", err)
	}
}

// A multi-attribute key whose column is of another type names that column,
// also when the plan reads fewer columns than the source has.
func TestNativeKeyTypeNamesItsColumn(t *testing.T) {
	doc := `table:
  name: shop
  gsis:
    - {name: ByTenant, partition_keys: [{name: tenant, type: S}]}
entities:
  Order:
    source: {table: orders}
    pk: ORDER#${id}
    sk: ORDER
    attributes: {select: [id, tenant]}
`
	cols := []extract.Column{{Name: "id", Type: "int4", PrimaryKey: true}, {Name: "note", Type: "text"}, {Name: "tenant", Type: "int8"}}
	got := compileErrors(t, doc, &transform.Sources{Columns: slices.Clip(cols)})
	want := []string{`m.yaml:4:41: table.gsis[0].partition_keys[0]: entity Order writes tenant from column tenant (int8), which DynamoDB stores as type N: the key declares type S`}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("errors (-want +got):\n%s", d)
	}
}
