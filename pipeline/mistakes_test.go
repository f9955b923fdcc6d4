package pipeline_test

import (
	"context"
	"errors"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// mistakesSQL is the source of the tests of this file.
const mistakesSQL = `
CREATE TABLE customers (customer_id integer PRIMARY KEY, name text NOT NULL, email text);
CREATE TABLE orders (order_id integer PRIMARY KEY, customer_id integer NOT NULL, total numeric(10,2));
CREATE TABLE settings (id integer PRIMARY KEY, theme text);
CREATE TABLE nothing (id integer PRIMARY KEY);
INSERT INTO customers VALUES (1, 'ann', 'a@x'), (2, 'bob', NULL);
INSERT INTO orders VALUES (10, 1, 5.00), (11, 1, 7.50), (12, 2, 1.00);
INSERT INTO settings VALUES (1, 'dark');`

// databaseRE matches the test database's URL in messages.
var databaseRE = regexp.MustCompile(`postgres://\S*/pg2d_test_[0-9a-f]+`)

// prepareLines runs Prepare on m over the database at url and returns the
// lines of its mapping errors (nil without any).
func prepareLines(t *testing.T, url string, m *mapping.Mapping) []string {
	t.Helper()
	ctx := context.Background()
	src, err := extract.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close(ctx)
	plans, err := pipeline.Prepare(ctx, src, m)
	var mes mapping.Errors
	switch {
	case errors.As(err, &mes):
		if plans != nil {
			t.Errorf("Prepare returned plans with mapping errors")
		}
		var out []string
		for _, e := range mes {
			out = append(out, e.Error())
		}
		return out
	case err != nil:
		t.Fatal(err)
	}
	return nil
}

// A table key without a placeholder gives every row the same key. It is
// refused on a source of more than one row (found by reading two), not on
// a source of one row or none, whose one item it names well.
func TestPrepareRefusesAFixedKeyOnManyRows(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, mistakesSQL)
	cases := []struct {
		name, entity string
		want         []string
	}{
		{"many rows", `  C: {source: {table: customers}, pk: CUSTOMERS, sk: ALL}`,
			[]string{`m.yaml:3:39: entities.C.pk: the partition key "CUSTOMERS" and the sort key "ALL" have no placeholder, and customers has more than one row: every row would render this one key, each item overwriting the one before; make the key tell the rows apart, such as ${customer_id}`}},
		{"many rows from a query", `  C: {source: {query: "SELECT name FROM customers"}, pk: CUSTOMERS, sk: ALL}`,
			[]string{`m.yaml:3:58: entities.C.pk: the partition key "CUSTOMERS" and the sort key "ALL" have no placeholder, and the query has more than one row: every row would render this one key, each item overwriting the one before; make the key tell the rows apart`}},
		{"a fixed mirror", `  O: {source: {table: orders}, pk: "O#${order_id}", sk: O, mirror: {pk: ORDERS, sk: ORDERS}}`,
			[]string{`m.yaml:3:73: entities.O.mirror.pk: the partition key "ORDERS" and the sort key "ORDERS" have no placeholder, and orders has more than one row: every row would render this one key, each item overwriting the one before; make the key tell the rows apart, such as ${order_id}`}},
		{"one row", `  S: {source: {table: settings}, pk: SETTINGS, sk: SETTINGS}`, nil},
		{"no row", `  N: {source: {table: nothing}, pk: NOTHING, sk: NOTHING}`, nil},
		{"one row from a query", `  T: {source: {query: "SELECT count(*) AS n FROM orders"}, pk: STATS, sk: ORDERS}`, nil},
		{"a placeholder in the sort key only", `  C: {source: {table: customers}, pk: CUSTOMERS, sk: "C#${customer_id}"}`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := mapping.Parse("m.yaml", []byte("table: {name: shop}\nentities:\n"+tc.entity+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, prepareLines(t, url, m)); d != "" {
				t.Errorf("errors (-want +got):\n%s", d)
			}
		})
	}
}

// A mapping with problems of every kind the file can show, and problems
// only the source can show: one run reports them all, in file order. An
// entity is still checked against the source past a problem of its own;
// what the checks would say where the file's problems are is not said
// again; a "{name}" says whether name is a column.
func TestPrepareReportsFileAndSourceProblemsTogether(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, mistakesSQL)
	text := `table:
  name: shop
  gsis:
    - {name: GSI1, partition_key: GSI1PK, sort_key: GSI1SK}
entities:
  Customer:
    source: {table: customers}
    pk: CUSTOMER#{customer_id}
    sk: PROFILE
    indexes:
      GSI2: {pk: "EMAIL#${email}"}
    attributes: {select: [name, emial]}
    embed:
      orders: {source: {table: orders}, join: {customer_id: customer_id}, max_items: ten}
  Order:
    source: {table: orders}
    pk: CUSTOMER#${customer_id}
    sk: ORDER#{order_idd}
    colour: red
  Missing:
    source: {table: no_such_table}
    pk: M#${id}
    sk: M
access_patterns:
  ByCustomer: {key_condition: "PK = CUSTOMER#{customer_id}"}
`
	m, err := mapping.ParsePartial(context.Background(), "m.yaml", []byte(text))
	if m == nil {
		t.Fatalf("ParsePartial: %v", err)
	}
	want := []string{
		`m.yaml:8:18: entities.Customer.pk: template "CUSTOMER#{customer_id}": "{customer_id}" is literal text, not a placeholder: did you mean ${customer_id}? (at character 10); customer_id is a column of customers`,
		`m.yaml:11:7: entities.Customer.indexes.GSI2: unknown index "GSI2": expected one of the table's gsis (GSI1)`,
		`m.yaml:12:33: entities.Customer.attributes.select[1]: unknown column "emial" (did you mean "email"?); customers has columns: customer_id, name, email`,
		`m.yaml:14:86: entities.Customer.embed.orders.max_items: expected a whole number, got a string ("ten")`,
		`m.yaml:18:15: entities.Order.sk: template "ORDER#{order_idd}": "{order_idd}" is literal text, not a placeholder: did you mean ${order_idd}? (at character 7); orders has no column "order_idd" either (did you mean "order_id"?)`,
		`m.yaml:19:5: entities.Order.colour: unknown field "colour"; expected one of: source, pk, sk, indexes, attributes, type, embed, duplicate, aggregates, ids, mirror`,
		`m.yaml:21:21: entities.Missing.source.table: relation "no_such_table" does not exist in DATABASE: expected an existing table or view`,
		`m.yaml:25:46: access_patterns.ByCustomer.key_condition: key condition "PK = CUSTOMER#{customer_id}": "{customer_id}" is literal text, not a placeholder: did you mean ${customer_id}? (at character 15); customer_id is a column of the source of Customer, Order`,
	}
	got := prepareLines(t, url, m)
	for i := range got {
		got[i] = databaseRE.ReplaceAllString(got[i], "DATABASE")
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("errors (-want +got):\n%s", d)
	}
}
