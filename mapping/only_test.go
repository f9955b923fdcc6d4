package mapping

import (
	"slices"
	"testing"
)

// Only keeps the entities picked, in the mapping's order, with their
// indexes in it, drops the access patterns, and leaves the mapping as it was.
func TestOnly(t *testing.T) {
	m := mustParse(t, []byte(`
version: 1
name: shop
table: {name: shop}
entities:
  Customer: {source: {table: customers}, pk: "CUSTOMER#${id}", sk: "CUSTOMER#${id}"}
  Order: {source: {table: orders}, pk: "CUSTOMER#${customer_id}", sk: "ORDER#${id}"}
  Item: {source: {table: items}, pk: "ORDER#${order_id}", sk: "ITEM#${id}"}
access_patterns:
  CustomerOrders: {key_condition: "PK = CUSTOMER#${customer_id} AND begins_with(SK, ORDER#)"}
`))
	sub, index := m.Only(func(i int, e *Entity) bool { return e.Name != "Order" })
	var names []string
	for _, e := range sub.Entities {
		names = append(names, e.Name)
	}
	if !slices.Equal(names, []string{"Customer", "Item"}) || !slices.Equal(index, []int{0, 2}) || len(sub.AccessPatterns) != 0 {
		t.Errorf("Only: entities %v at %v, %d access patterns; want [Customer Item] at [0 2], none", names, index, len(sub.AccessPatterns))
	}
	if len(m.Entities) != 3 || len(m.AccessPatterns) != 1 || sub.Table.Name != "shop" {
		t.Errorf("the mapping changed: %d entities, %d access patterns; the copy's table %q", len(m.Entities), len(m.AccessPatterns), sub.Table.Name)
	}
}
