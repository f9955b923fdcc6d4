package verify

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// With ChangeCost, a diff prices the differences apart from the full run:
// a new item as derived, a changed item at its larger version (here the
// table's, 2 KB), and a stale item's delete at its own size; without it,
// they are not priced.
func TestCompareChangeCost(t *testing.T) {
	m, src := shop(t, "")
	items := src.tableItems(t)
	items[4] = with(items[4], "note", &types.AttributeValueMemberS{Value: strings.Repeat("x", 1900)}) // order 2: 2 write units in the table
	items = without(items, "CUSTOMER#0000000011", "ORDER#0000000003")                                 // order 3: new
	items = append(items, item{"PK": &types.AttributeValueMemberS{Value: "CUSTOMER#0000000099"},
		"SK": &types.AttributeValueMemberS{Value: "ORDER#0000000099"}, "type": &types.AttributeValueMemberS{Value: "Order"},
		"note": &types.AttributeValueMemberS{Value: strings.Repeat("y", 1500)}}) // stale, 2 write units
	for _, priced := range []bool{false, true} {
		res, err := runCompare(t, m, src, &fakeTable{keys: [2]string{"PK", "SK"}, items: items}, Options{SkipPatterns: true, ChangeCost: priced})
		if err != nil {
			t.Fatal(err)
		}
		order := res.Entities[1]
		if order.Missing != 1 || order.Changed != 1 || order.Stale != 1 {
			t.Fatalf("order counts %+v, want 1 new, 1 changed, 1 stale", order)
		}
		wantChange, wantStale := int64(1+2), int64(2)
		if !priced {
			wantChange, wantStale = 0, 0
		}
		if order.ChangeWriteUnits != wantChange || order.StaleWriteUnits != wantStale {
			t.Errorf("ChangeCost %v: %d change and %d stale write units, want %d and %d", priced, order.ChangeWriteUnits, order.StaleWriteUnits, wantChange, wantStale)
		}
		if c := res.Entities[0]; c.ChangeWriteUnits != 0 || c.StaleWriteUnits != 0 {
			t.Errorf("customers, unchanged, priced %+v", c)
		}
	}
}
