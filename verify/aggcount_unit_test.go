package verify

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// A count aggregate's sum over the Scan's items must equal PostgreSQL's
// count of the child rows joined to the parent's rows. A transform that
// counts one too many for a customer (on both sides: the items compare
// equal) fails it.
func TestCompareSumsCountAggregates(t *testing.T) {
	for _, tc := range []struct {
		name string
		off  bool
		want string
	}{
		{"as derived", false, ""},
		{"one off", true, "aggregate order_count: its items of entity Customer sum to 6 (0 without an integer), but PostgreSQL joins 5 rows of table orders to its rows, 0 rejected left out: 5 expected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := mapping.Parse("shop.yaml", []byte(strings.Replace(collectionMapping, "    sk: PROFILE\n",
				"    sk: PROFILE\n    aggregates:\n      order_count: {function: count, source: {table: orders}, join: {customer_id: id}}\n", 1)))
			if err != nil {
				t.Fatal(err)
			}
			orders := []extract.Column{{Name: "order_id", Type: "int4", PrimaryKey: true}, {Name: "customer_id", Type: "int4"}, {Name: "note", Type: "text"}}
			plans, err := transform.CompileAll(m, []*transform.Sources{
				{Columns: []extract.Column{{Name: "id", Type: "int4", PrimaryKey: true}, {Name: "name", Type: "text"}}, Aggregate: map[string][]extract.Column{"order_count": orders}},
				{Columns: orders},
			})
			if err != nil {
				t.Fatal(err)
			}
			_, src := shopFrom(t, collectionMapping)
			src.plans = plans
			for i, n := range []int64{3, 1, 1} {
				src.rows[0][i] = append(src.rows[0][i], n)
			}
			if tc.off {
				src.mangle = func(it item) {
					if sValue(it, "PK") == "CUSTOMER#10" && sValue(it, "SK") == "PROFILE" {
						it["order_count"] = &types.AttributeValueMemberN{Value: "4"}
					}
				}
			}
			res, err := runCompare(t, m, src, &fakeTable{keys: [2]string{"PK", "SK"}, items: src.tableItems(t)}, Options{SkipPatterns: true})
			if err != nil {
				t.Fatal(err)
			}
			got := res.Entities[0].CountProblem
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) || res.OK() != (tc.want == "") {
				t.Errorf("Customer's count problem %q, ok %v; want %q", got, res.OK(), tc.want)
			}
		})
	}
}
