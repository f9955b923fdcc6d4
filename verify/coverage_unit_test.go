package verify

import (
	"strings"
	"testing"
)

// Every GSI is counted per entity from the Scan's items, queried or not:
// the items of Order's type carrying GSI1PK and GSI1SK must number
// PostgreSQL's orders with a note. A transform that drops an order's GSI
// keys on both sides (the items still compare equal) fails that count.
func TestCompareCountsGSICoverage(t *testing.T) {
	for _, tc := range []struct {
		name string
		drop bool
		want string
	}{
		{"as derived", false, ""},
		{"keys dropped", true, "GSI GSI1: the table has 3 items of entity Order with GSI1PK and GSI1SK, but PostgreSQL counts 4 rows of table orders whose note, order_id are not NULL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, src := shopFrom(t, sparseMapping)
			src.rows[1][1][2] = nil // order 2 has no note
			if tc.drop {
				src.mangle = func(it item) {
					if sValue(it, "SK") == "ORDER#0000000003" {
						delete(it, "GSI1PK")
						delete(it, "GSI1SK")
					}
				}
			}
			table := &fakeTable{keys: [2]string{"PK", "SK"}, items: src.tableItems(t)}
			res, err := runCompare(t, m, src, table, Options{SkipPatterns: true})
			if err != nil {
				t.Fatal(err)
			}
			got := res.Entities[1].CountProblem
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) || res.OK() != (tc.want == "") {
				t.Errorf("Order's count problem %q, ok %v; want %q", got, res.OK(), tc.want)
			}
			if res.Entities[0].CountProblem != "" {
				t.Errorf("Customer's count problem %q", res.Entities[0].CountProblem)
			}
		})
	}
}
