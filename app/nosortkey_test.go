package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// noSortKeySQL is customers and products, each found by its own id, and a
// customer by email.
const noSortKeySQL = `
CREATE TABLE customers (customer_id int PRIMARY KEY, email text NOT NULL UNIQUE, name text NOT NULL);
CREATE TABLE products (sku text PRIMARY KEY, title text NOT NULL, price numeric(8,2) NOT NULL);
INSERT INTO customers SELECT i, 'c' || i || '@example.com', 'customer ' || i FROM generate_series(1, 40) i;
INSERT INTO products SELECT 'P-' || i, 'product ' || i, i * 1.25 FROM generate_series(1, 30) i;
ALTER TABLE customers REPLICA IDENTITY FULL;
ALTER TABLE products REPLICA IDENTITY FULL;`

// noSortKeyMapping keys its table by a partition key alone: a key-value
// design, one item a partition.
const noSortKeyMapping = `name: kv
table:
  name: keyvalue
  sort_key: ""
  gsis:
    - {name: ByEmail, partition_key: GSI1PK}
entities:
  Customer:
    source: {table: customers}
    pk: CUSTOMER#${customer_id}
    indexes:
      ByEmail: {pk: "EMAIL#${email}"}
  Product:
    source: {table: products}
    pk: PRODUCT#${sku}
access_patterns:
  GetCustomer:
    key_condition: "PK = CUSTOMER#${customer_id}"
  GetProduct:
    key_condition: "PK = PRODUCT#${sku}"
  CustomerByEmail:
    index: ByEmail
    key_condition: "GSI1PK = EMAIL#${email}"
`

// A table with a partition key alone (sort_key: ""): migrate creates it
// with a HASH key only and writes items without a sort key, which GetItem
// finds by the partition key alone; verify passes, its patterns queried
// on the partition key; --changes-only rewrites a changed row, --prune
// deletes a deleted row's item by its partition key; a follow that
// re-keys, deletes and inserts rows leaves the table equal to a fresh
// full load; export writes the items as they are.
func TestTableWithoutSortKey(t *testing.T) {
	parallel(t)
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, noSortKeySQL)
	file := writeMapping(t, noSortKeyMapping)
	table := testenv.TableName("nosk")
	c := dynamoClient(t)
	ctx := context.Background()

	args := migrateArgs(t, file, url, table, "--create-table", "--follow", "--until-caught-up")
	if r := runCLI(t, args...); r.code != ExitOK {
		t.Fatalf("migrate --create-table --follow --until-caught-up: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	t.Cleanup(func() { runCLI(t, "drop-slot", "--mapping", file, "--source", url, "--table", table) })
	td, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(keysOf(td.Table.KeySchema)); got != "[PK HASH]" {
		t.Errorf("the created table's key schema: %s, want [PK HASH]", got)
	}
	out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "PRODUCT#P-7"}}})
	if err != nil || str(out.Item["title"]) != "product 7" {
		t.Fatalf("GetItem by the partition key alone: %v, %v", err, out.Item)
	}
	verify := func(when string) {
		t.Helper()
		r := runCLI(t, "verify", "--mapping", file, "--source", url, "--endpoint-url", dynalite(t).Endpoint, "--table", table)
		if r.code != ExitOK || !strings.Contains(r.stdout+r.stderr, "access-pattern queries, 0 wrong") {
			t.Fatalf("verify %s: exit %d\n%s\n%s", when, r.code, r.stdout, r.stderr)
		}
	}
	verify("after the load")

	testenv.Exec(t, url, `UPDATE customers SET name = 'renamed' WHERE customer_id = 5;
DELETE FROM products WHERE sku = 'P-4'; INSERT INTO products VALUES ('P-99', 'product 99', 1)`)
	report := filepath.Join(t.TempDir(), "diff.json")
	if r := runCLI(t, "diff", "--mapping", file, "--source", url, "--endpoint-url", dynalite(t).Endpoint, "--table", table,
		"--report-json", report); r.code != ExitOK {
		t.Fatalf("diff: exit %d\n%s", r.code, r.stderr)
	}
	d := readReport(t, report)
	if n := d.Summary; n.New != 1 || n.Changed != 1 || n.Stale != 1 {
		t.Errorf("diff: %+v; want 1 new, 1 changed and 1 stale item", n)
	}
	if x := listed(t, d.Extra); len(x) != 1 || x[0].PK != "PRODUCT#P-4" || x[0].SK != "" {
		t.Errorf("diff's stale item: %+v, want PRODUCT#P-4 without a sort key", x)
	}
	if r := runCLI(t, migrateArgs(t, file, url, table, "--changes-only")...); r.code != ExitOK {
		t.Fatalf("migrate --changes-only: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	testenv.Exec(t, url, "DELETE FROM customers WHERE customer_id IN (6, 7); DELETE FROM products WHERE sku = 'P-3'")
	if r := runCLI(t, migrateArgs(t, file, url, table, "--prune")...); r.code != ExitOK {
		t.Fatalf("migrate --prune: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	verify("after --changes-only and --prune")
	if n := len(scanAll(t, c, table)); n != 38+29 {
		t.Errorf("%d items after --prune, want %d", n, 38+29)
	}

	// The follow: rows moved to other partition keys, deleted, inserted.
	testenv.Exec(t, url, `
UPDATE customers SET customer_id = customer_id + 1000 WHERE customer_id BETWEEN 10 AND 14;
UPDATE products SET sku = 'Q-' || sku WHERE sku IN ('P-1', 'P-2');
UPDATE customers SET email = 'new' || email WHERE customer_id = 20;
DELETE FROM customers WHERE customer_id BETWEEN 30 AND 33;
INSERT INTO customers VALUES (500, 'c500@example.com', 'customer 500');
INSERT INTO products VALUES ('P-500', 'product 500', 9.99);`)
	if r := runCLI(t, append(slices.Clip(args), "--resume")...); r.code != ExitOK {
		t.Fatalf("migrate --follow --resume --until-caught-up: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	fresh := table + "-fresh"
	if r := runCLI(t, migrateArgs(t, file, url, fresh, "--create-table")...); r.code != ExitOK {
		t.Fatalf("a fresh full load: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	followed := sortedItemTexts(t, c, table)
	if d := cmp.Diff(sortedItemTexts(t, c, fresh), followed); d != "" {
		t.Errorf("the followed table differs from a fresh full load (-fresh +followed):\n%s", d)
	}
	if len(followed) != 35+30 {
		t.Errorf("%d items after the follow, want %d", len(followed), 35+30)
	}
	verify("after the follow")

	dir := t.TempDir()
	if r := runCLI(t, "export", "--mapping", file, "--source", url, "--to", "file://"+dir+"/", "--progress", "none",
		"--rejects", filepath.Join(t.TempDir(), "r.jsonl")); r.code != ExitOK {
		t.Fatalf("export: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	manifest, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil || strings.Contains(string(manifest), `"sort_key"`) || !strings.Contains(string(manifest), `"partition_key": "PK"`) {
		t.Errorf("export manifest: %v\n%s", err, manifest)
	}
}

// Without a table sort key, two items of one partition key are one item:
// a row whose partition key another entity's row (or another row) already
// rendered is rejected with the reason, the others written (exit 3).
func TestTableWithoutSortKeyCollision(t *testing.T) {
	parallel(t)
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `
CREATE TABLE users (user_id int PRIMARY KEY, name text NOT NULL);
CREATE TABLE admins (admin_id int PRIMARY KEY, name text NOT NULL);
INSERT INTO users SELECT i, 'user ' || i FROM generate_series(1, 10) i;
INSERT INTO admins VALUES (3, 'admin 3'), (11, 'admin 11');`)
	file := writeMapping(t, `name: kv
table: {name: keyvalue, sort_key: ""}
entities:
  User:
    source: {table: users}
    pk: ID#${user_id}
  Admin:
    source: {table: admins}
    pk: ID#${admin_id}
`)
	table := testenv.TableName("noskdup")
	args := migrateArgs(t, file, url, table, "--create-table")
	r := runCLI(t, args...)
	if r.code != ExitRejected {
		t.Fatalf("migrate: exit %d, want %d\n%s\n%s", r.code, ExitRejected, r.stdout, r.stderr)
	}
	rejects, err := os.ReadFile(args[slices.Index(args, "--rejects")+1])
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(rejects)), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"entity":"Admin"`) || !strings.Contains(lines[0], `ID#0000000003`) {
		t.Errorf("rejects: want admin 3's row, its partition key taken by user 3:\n%s", rejects)
	}
	t.Logf("reject: %s", lines[0])
	if n := len(scanAll(t, dynamoClient(t), table)); n != 11 {
		t.Errorf("%d items, want 11 (10 users, admin 11)", n)
	}
}

// sortedItemTexts is the table's items as canonical text, sorted.
func sortedItemTexts(t *testing.T, c *dynamodb.Client, table string) []string {
	t.Helper()
	out := itemTexts(t, c, table)
	slices.Sort(out)
	return out
}

// A GSI with a partition key alone returns the items of a partition in no
// defined order (dynalite: by a hash of the table key): verify compares
// such an answer as a set, and passes on a table a migrate just wrote.
func TestVerifyGSIWithoutSortKey(t *testing.T) {
	parallel(t)
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE customers (customer_id int PRIMARY KEY, tier text NOT NULL, name text NOT NULL);
INSERT INTO customers SELECT i, 'tier-' || (i % 2), 'customer ' || i FROM generate_series(1, 40) i;`)
	file := writeMapping(t, `name: tiers
table:
  name: tiers
  gsis:
    - {name: ByTier, partition_key: GSI1PK}
entities:
  Customer:
    source: {table: customers}
    pk: CUSTOMER#${customer_id}
    sk: PROFILE
    indexes:
      ByTier: {pk: "TIER#${tier}"}
access_patterns:
  CustomersByTier:
    index: ByTier
    key_condition: "GSI1PK = TIER#${tier}"
`)
	r := runCLI(t, migrateArgs(t, file, url, testenv.TableName("tiers"), "--create-table")...)
	if r.code != ExitOK || !strings.Contains(r.stdout+r.stderr, "access-pattern queries, 0 wrong") {
		t.Fatalf("migrate and its verify of 20 customers a tier on a GSI without a sort key: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
