package app

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// checkGolden compares got with testdata/<name>.golden, or rewrites it
// with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./app -run %s -update to create it)", err, t.Name())
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, d)
	}
}

// shopSQL is the small, hand-written source every strategy test maps.
const shopSQL = `
CREATE TABLE customers (id integer PRIMARY KEY, name text NOT NULL, tier text);
CREATE TABLE addresses (id integer PRIMARY KEY, customer_id integer NOT NULL REFERENCES customers,
  label text NOT NULL, state char(2) NOT NULL, city text NOT NULL, zip text NOT NULL, UNIQUE (customer_id, label));
CREATE TABLE orders (id integer PRIMARY KEY, customer_id integer NOT NULL REFERENCES customers,
  created_at timestamptz NOT NULL, total numeric(10,2) NOT NULL, shipped_at timestamptz);
CREATE TABLE students (id integer PRIMARY KEY, name text NOT NULL);
CREATE TABLE lectures (id integer PRIMARY KEY, title text NOT NULL);
CREATE TABLE attendance (student_id integer REFERENCES students, lecture_id integer REFERENCES lectures,
  PRIMARY KEY (student_id, lecture_id));
INSERT INTO customers VALUES (1, 'Ada', 'gold'), (2, 'Bo', NULL), (3, 'Cy', 'gold');
INSERT INTO addresses VALUES
  (10, 1, 'home', 'CA', 'Oakland', '94607'), (11, 1, 'work', 'CA', 'San Jose', '95113'),
  (12, 2, 'home', 'NY', 'Albany', '12207'), (13, 3, 'home', 'CA', 'Oakland', '94610');
INSERT INTO orders VALUES
  (100, 1, '2024-01-05 10:00:00+00', 25.50, '2024-01-06 09:00:00+00'),
  (101, 1, '2024-02-01 08:30:00+00', 12.00, NULL),
  (102, 2, '2024-01-20 12:00:00.25+00', 99.99, NULL),
  (103, 1, '2024-03-15 17:45:00+00', 7.25, '2024-03-16 08:00:00+00');
INSERT INTO students VALUES (1, 'Ann'), (2, 'Ben'), (3, 'Cat');
INSERT INTO lectures VALUES (7, 'Databases'), (9, 'Networks');
INSERT INTO attendance VALUES (1, 7), (1, 9), (2, 7), (3, 9);
`

// strategyCase is one modeling strategy: a mapping over shopSQL and the
// reads whose results, with the whole table and the rejects, make its
// golden file.
type strategyCase struct {
	name    string
	mapping string
	gsis    bool
	queries []*dynamodb.QueryInput
}

func keyQuery(index, pkAttr, pk, skAttr, prefix string, forward bool) *dynamodb.QueryInput {
	in := &dynamodb.QueryInput{ScanIndexForward: aws.Bool(forward),
		KeyConditionExpression:    aws.String("#p = :p"),
		ExpressionAttributeNames:  map[string]string{"#p": pkAttr},
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: pk}}}
	if index != "" {
		in.IndexName = aws.String(index)
	}
	if skAttr != "" {
		*in.KeyConditionExpression += " AND begins_with(#s, :s)"
		in.ExpressionAttributeNames["#s"] = skAttr
		in.ExpressionAttributeValues[":s"] = &types.AttributeValueMemberS{Value: prefix}
	}
	return in
}

var strategyCases = []strategyCase{
	{name: "embed-list", mapping: `
name: shop
table: {name: shop}
entities:
  Customer:
    source: {table: customers}
    pk: CUSTOMER#${id}
    sk: PROFILE
    embed:
      addresses:
        source: {table: addresses}
        join: {customer_id: id}
        order_by: [id DESC]
        attributes: {select: [label, city]}
`},
	{name: "embed-map-bounded", mapping: `
name: shop
table: {name: shop}
entities:
  Customer:
    source: {table: customers}
    pk: CUSTOMER#${id}
    sk: PROFILE
    embed:
      addresses:
        source: {table: addresses}
        join: {customer_id: id}
        as: map
        key: label
        max_items: 1
        attributes: {exclude: [id, customer_id, label]}
`},
	{name: "duplicate", mapping: `
name: shop
table: {name: shop}
entities:
  Order:
    source: {table: orders}
    pk: ORDER#${id}
    sk: ORDER
    attributes: {select: [total]}
    duplicate:
      - source: {table: customers}
        join: {id: customer_id}
        attributes: {select: [name, tier], rename: {name: customer_name}}
`},
	{name: "item-collection-parent-last", mapping: `
name: shop
table: {name: shop}
entities:
  Customer:
    source: {table: customers}
    pk: CUSTOMER#${id}
    sk: PROFILE
  Order:
    source: {table: orders}
    pk: CUSTOMER#${customer_id}
    sk: ORDER#${created_at}#${id}
    attributes: {select: [id, total]}
`, queries: []*dynamodb.QueryInput{keyQuery("", "PK", "CUSTOMER#0000000001", "", "", false)}},
	{name: "gsi-overloaded-sparse", gsis: true, mapping: `
name: shop
table:
  name: shop
  gsis:
    - {name: GSI1, partition_key: GSI1PK, sort_key: GSI1SK}
    - {name: GSI2, partition_key: GSI2PK, sort_key: GSI2SK, projection: KEYS_ONLY}
entities:
  Customer:
    source: {table: customers}
    pk: CUSTOMER#${id}
    sk: PROFILE
    indexes:
      GSI1: {pk: "TIER#${tier}", sk: "CUSTOMER#${id}", sparse: true}
    attributes: {select: [name]}
  Order:
    source: {table: orders}
    pk: ORDER#${id}
    sk: ORDER
    indexes:
      GSI1: {pk: "CUSTOMER#${customer_id}", sk: "ORDER#${created_at}"}
      GSI2: {pk: "SHIPPED", sk: "${shipped_at}#${id}", sparse: true}
    attributes: {select: [total]}
`, queries: []*dynamodb.QueryInput{
		keyQuery("GSI1", "GSI1PK", "TIER#gold", "", "", true),
		keyQuery("GSI1", "GSI1PK", "CUSTOMER#0000000001", "GSI1SK", "ORDER#2024-0", true),
		keyQuery("GSI2", "GSI2PK", "SHIPPED", "", "", true),
	}},
	{name: "composite-sort-key", gsis: true, mapping: `
name: shop
table: {name: shop}
entities:
  Address:
    source: {table: addresses}
    pk: ADDRESS
    sk: ${state}#${city}#${zip}#${id}
    attributes: {select: [label]}
`, queries: []*dynamodb.QueryInput{
		keyQuery("", "PK", "ADDRESS", "SK", "CA#", true),
		keyQuery("", "PK", "ADDRESS", "SK", "CA#Oakland#", true),
	}},
	{name: "adjacency-list-inverted-index", gsis: true, mapping: `
name: shop
table:
  name: shop
  gsis:
    - {name: Inverted, partition_key: SK, sort_key: PK}
entities:
  Attendance:
    source: {table: attendance}
    pk: STUDENT#${student_id}
    sk: LECTURE#${lecture_id}
    duplicate:
      - source: {table: lectures}
        join: {id: lecture_id}
        attributes: {select: [title], rename: {title: lecture_title}}
`, queries: []*dynamodb.QueryInput{keyQuery("Inverted", "SK", "LECTURE#0000000007", "", "", true)}},
	{name: "adjacency-list-both-directions", mapping: `
name: shop
table: {name: shop}
entities:
  Attendance:
    source: {table: attendance}
    pk: STUDENT#${student_id}
    sk: LECTURE#${lecture_id}
    mirror: {pk: "LECTURE#${lecture_id}", sk: "STUDENT#${student_id}"}
`},
	{name: "aggregates", mapping: `
name: shop
table: {name: shop}
entities:
  Customer:
    source: {table: customers}
    pk: CUSTOMER#${id}
    sk: PROFILE
    attributes: {select: [name]}
    aggregates:
      order_count: {function: count, source: {table: orders}, join: {customer_id: id}}
      order_total: {function: sum, column: total, source: {table: orders}, join: {customer_id: id}}
      first_order: {function: min, column: created_at, source: {table: orders}, join: {customer_id: id}}
  Lecture:
    source: {table: lectures}
    pk: LECTURE#${id}
    sk: LECTURE
    aggregates:
      student_count: {function: count, source: {table: attendance}, join: {lecture_id: id}}
`},
	{name: "stable-ids", mapping: `
name: shop
table: {name: shop}
entities:
  Order:
    source: {table: orders}
    pk: ORDER#${id}
    sk: ORDER
    attributes: {select: [created_at]}
    ids:
      order_ksuid: {kind: ksuid, time: created_at, from: [id]}
      order_ulid: {kind: ulid, time: created_at, from: [id]}
`},
}

// TestStrategies migrates shopSQL with each strategy's mapping and compares
// the whole table, the rejects and the strategy's reads with its golden
// file (go test ./app -run TestStrategies -update rewrites them).
func TestStrategies(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, shopSQL)
	for _, tc := range strategyCases {
		t.Run(tc.name, func(t *testing.T) {
			table := testenv.TableName("shop")
			args := migrateArgs(t, writeMapping(t, tc.mapping), url, table, "--create-table")
			r := runCLI(t, args...)
			if r.code != ExitOK && r.code != ExitRejected {
				t.Fatalf("migrate exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			var b strings.Builder
			b.WriteString("# items (Scan, by PK and SK)\n")
			for _, it := range testenv.CanonicalItems(scanAll(t, dynamoClient(t), table)) {
				b.WriteString(it + "\n")
			}
			rejects, err := os.ReadFile(rejectsPath(args))
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString("# rejects\n")
			b.Write(rejects)
			for _, q := range tc.queries {
				q.TableName = aws.String(table)
				desc, _ := json.Marshal(map[string]any{"index": aws.ToString(q.IndexName), "key": aws.ToString(q.KeyConditionExpression),
					"names": q.ExpressionAttributeNames, "values": testenv.CanonicalItem(q.ExpressionAttributeValues), "forward": aws.ToBool(q.ScanIndexForward)})
				b.WriteString("# query " + string(desc) + "\n")
				for _, it := range testenv.CanonicalItems(queryAll(t, dynamoClient(t), q)) {
					b.WriteString(it + "\n")
				}
			}
			checkGolden(t, "strategies/"+tc.name, b.String())
		})
	}
}
