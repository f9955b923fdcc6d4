package transform_test

import (
	"fmt"
	"log"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// A reader goroutine converts its rows with a Builder of its own; the items
// stay valid while it goes on, so they can be queued to writers.
func ExampleBuilder() {
	m, err := mapping.Parse("m.yaml", []byte(`
table: {name: shop}
entities:
  Order:
    source: {table: orders}
    pk: CUSTOMER#${customer_id}
    sk: ORDER#${order_id}
`))
	if err != nil {
		log.Fatal(err)
	}
	cols := []extract.Column{{Name: "order_id", Type: "int4", PrimaryKey: true}, {Name: "customer_id", Type: "int4"}, {Name: "note", Type: "jsonb", AsText: true}}
	plan, err := transform.Compile(m, 0, transform.Sources{Columns: cols})
	if err != nil {
		log.Fatal(err)
	}
	b := transform.NewBuilder()
	var items []transform.Item
	for _, row := range [][]any{{int32(7), int32(42), `{"gift": true}`}, {int32(8), int32(42), nil}} {
		if items, err = b.Items(plan, row, items); err != nil {
			log.Fatal(err) // a *transform.RowError is the row's, not the run's
		}
	}
	for _, it := range items {
		fmt.Println(it.Attrs["PK"].(*types.AttributeValueMemberS).Value, it.Attrs["SK"].(*types.AttributeValueMemberS).Value, len(it.Attrs))
	}
	// Output:
	// CUSTOMER#0000000042 ORDER#0000000007 6
	// CUSTOMER#0000000042 ORDER#0000000008 5
}
