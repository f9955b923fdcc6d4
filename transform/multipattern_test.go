package transform_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify"
)

// ordersByTenant is a mapping of orders with a multi-attribute GSI, up to its
// access patterns.
const ordersByTenant = `table:
  name: orders
  gsis:
    - {name: ByTenant, partition_keys: [{name: tenant_id, type: S}], sort_keys: [{name: total, type: N}]}
entities:
  Order: {source: {table: orders}, pk: "O#${order_id}", sk: O}
access_patterns:
`

// A pattern on a GSI with multi-attribute keys takes each parameter as the
// items carry the attribute: a column written as another type than the
// attribute's is a mapping error at the key condition; a literal is of the
// attribute's type; a NULL parameter renders no Query.
func TestMultiAttributePatternValues(t *testing.T) {
	doc := ordersByTenant + `  Good: {index: ByTenant, key_condition: "tenant_id = ${tenant_id} AND total >= 10"}
  Bad: {index: ByTenant, key_condition: "tenant_id = ${order_id}"}
`
	m, err := mapping.Parse("m.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	cols := []extract.Column{{Name: "order_id", Type: "int4", PrimaryKey: true, KeyPos: 1}, {Name: "tenant_id", Type: "text"}, {Name: "total", Type: "int8"}}
	p, err := transform.Compile(m, 0, transform.Sources{Columns: cols})
	if err != nil {
		t.Fatal(err)
	}
	plans := []*transform.Plan{p}
	good, err := transform.CompilePattern(m, m.AccessPatterns[0], plans)
	if err != nil {
		t.Fatal(err)
	}
	terms, err := good.RenderTerms([]any{"acme"})
	if err != nil || len(terms) != 2 || terms[1].Op != ">=" {
		t.Fatalf("RenderTerms = %+v, %v", terms, err)
	}
	if n, ok := transform.KeyText(terms[1].Values[0]); !ok || n != "10" || terms[1].Type != mapping.TypeNumber {
		t.Errorf("the literal bound: %#v, want the number 10", terms[1].Values[0])
	}
	if _, err := good.RenderTerms([]any{nil}); err == nil {
		t.Error("RenderTerms with a NULL parameter: no error")
	}
	_, err = transform.CompilePattern(m, m.AccessPatterns[1], plans)
	if err == nil || !strings.Contains(err.Error(), `access_patterns.Bad.key_condition: tenant_id: column "order_id" is written as N, and the key attribute is of type S`) {
		t.Errorf("CompilePattern(Bad) = %v", err)
	}
}

// A filter on a multi-attribute GSI pattern is checked when the mapping
// loads, as on any index, and becomes the Query's FilterExpression.
func TestMultiAttributePatternFilter(t *testing.T) {
	doc := ordersByTenant + `  Open: {index: ByTenant, key_condition: "tenant_id = ${tenant_id}", filter: %q}
`
	for _, c := range []struct{ filter, err string }{
		{"this is ((( not a filter", "access_patterns.Open.filter: "},
		{"total > ${total}", `access_patterns.Open.filter: the filter names "total", a key attribute of index ByTenant`},
	} {
		if _, err := mapping.Parse("m.yaml", []byte(fmt.Sprintf(doc, c.filter))); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("filter %q: %v, want an error holding %q", c.filter, err, c.err)
		}
	}
	m, err := mapping.Parse("m.yaml", []byte(fmt.Sprintf(doc, "status <> ${status}")))
	if err != nil {
		t.Fatal(err)
	}
	cols := []extract.Column{{Name: "order_id", Type: "int4", PrimaryKey: true, KeyPos: 1}, {Name: "tenant_id", Type: "text"}, {Name: "total", Type: "int8"}, {Name: "status", Type: "text"}}
	p, err := transform.Compile(m, 0, transform.Sources{Columns: cols})
	if err != nil {
		t.Fatal(err)
	}
	pp, err := transform.CompilePattern(m, m.AccessPatterns[0], []*transform.Plan{p})
	if err != nil {
		t.Fatal(err)
	}
	in, err := verify.PatternQuery("orders", pp, []any{"acme", "open"})
	if err != nil || in.FilterExpression == nil || !strings.Contains(fmt.Sprint(in.ExpressionAttributeNames), "status") {
		t.Errorf("PatternQuery = %+v, %v; want status's filter", in, err)
	}
}
