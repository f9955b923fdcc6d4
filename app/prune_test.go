package app

import (
	"context"
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

const pruneSQL = `
CREATE TABLE customers (id integer PRIMARY KEY, name text NOT NULL);
CREATE TABLE orders (id integer PRIMARY KEY, customer_id integer NOT NULL REFERENCES customers, total numeric(10,2) NOT NULL);
INSERT INTO customers VALUES (1, 'Ada'), (2, 'Bo'), (3, 'Cy');
INSERT INTO orders VALUES (1, 1, 10.50), (2, 1, 20), (3, 2, 30), (4, 3, 40), (5, 3, 50);`

const pruneMapping = `version: 1
name: shop
table: {name: shop}
entities:
  Customer:
    source: {table: customers}
    pk: CUSTOMER#${id}
    sk: CUSTOMER#${id}
  Order:
    source: {table: orders}
    pk: CUSTOMER#${customer_id}
    sk: ORDER#${id}
`

// TestPruneDeletesOnlyStaleItems deletes a source row and changes another's
// key: the next migrate's verify fails naming --prune; migrate --prune
// deletes exactly the two stale items, verify passes, and two items of
// types the mapping does not have (one typed, one untyped, one of them in
// a customer's partition) are untouched.
func TestPruneDeletesOnlyStaleItems(t *testing.T) {
	parallel(t)
	src := testenv.NewDatabase(t)
	testenv.Exec(t, src, pruneSQL)
	file := filepath.Join(t.TempDir(), "mapping.yaml")
	if err := os.WriteFile(file, []byte(pruneMapping), 0o644); err != nil {
		t.Fatal(err)
	}
	table := testenv.TableName("prune")
	if r := runCLI(t, migrateArgs(t, file, src, table, "--create-table")...); r.code != ExitOK {
		t.Fatalf("migrate exit %d\n%s", r.code, r.stderr)
	}
	c := dynamoClient(t)
	others := []map[string]types.AttributeValue{
		{"PK": &types.AttributeValueMemberS{Value: "CUSTOMER#0000000001"}, "SK": &types.AttributeValueMemberS{Value: "NOTE#1"},
			"type": &types.AttributeValueMemberS{Value: "Note"}, "text": &types.AttributeValueMemberS{Value: "call back"}},
		{"PK": &types.AttributeValueMemberS{Value: "CONFIG"}, "SK": &types.AttributeValueMemberS{Value: "CONFIG"}},
	}
	for _, it := range others {
		if _, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: it}); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Exec(t, src, "DELETE FROM orders WHERE id = 2; UPDATE orders SET id = 30 WHERE id = 3")

	r := runCLI(t, migrateArgs(t, file, src, table)...)
	if r.code != ExitMismatch || !strings.Contains(r.stderr, "2 stale items") || !strings.Contains(r.stderr, "migrate --prune") {
		t.Fatalf("migrate without --prune: exit %d, want %d and a hint naming 2 stale items and --prune\n%s", r.code, ExitMismatch, r.stderr)
	}
	dir := t.TempDir()
	r = runCLI(t, migrateArgs(t, file, src, table, "--prune", "--report-json", filepath.Join(dir, "r.json"), "--html", filepath.Join(dir, "r.html"))...)
	if r.code != ExitOK || !strings.Contains(r.stderr, "prune: deleted 2 stale items (Order 2)") {
		t.Fatalf("migrate --prune: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	// The verify's report says what was deleted before it: text, JSON, HTML.
	if !strings.Contains(r.stdout, "Pruned before the check (migrate --prune)") || !strings.Contains(r.stdout, "deleted      2 stale (Order 2)") ||
		!strings.Contains(r.stdout, "Deleted by migrate --prune (2)") {
		t.Errorf("the report does not say what --prune deleted:\n%s", r.stdout)
	}
	rep := readChangesReport(t, filepath.Join(dir, "r.json"))
	if a := rep.Applied; a.Command != "prune" || a.Deleted != 2 || len(rep.Deleted) != 2 || a.Counts.Delete.Total != 2 || a.WriteUnits != 2 {
		t.Errorf("JSON report: applied %+v, deleted %v; want prune's 2 deletes (2 write units) listed", a, rep.Deleted)
	}
	checkHTMLShows(t, filepath.Join(dir, "r.html"), `data-applied="deleted">2 stale (Order 2)<`, `<h2 data-list="pruned">Deleted by migrate --prune (2)</h2>`)

	got := map[string]map[string]types.AttributeValue{}
	for _, it := range scanAll(t, c, table) {
		got[str(it["PK"])+" "+str(it["SK"])] = it
	}
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	const c1, c2, c3 = "CUSTOMER#0000000001", "CUSTOMER#0000000002", "CUSTOMER#0000000003"
	want := []string{"CONFIG CONFIG", c1 + " " + c1, c1 + " NOTE#1", c1 + " ORDER#0000000001",
		c2 + " " + c2, c2 + " ORDER#0000000030", c3 + " " + c3, c3 + " ORDER#0000000004", c3 + " ORDER#0000000005"}
	if d := cmp.Diff(want, sorted(keys)); d != "" {
		t.Errorf("keys after prune (-want +got):\n%s", d)
	}
	for _, it := range others {
		k := str(it["PK"]) + " " + str(it["SK"])
		if d := cmp.Diff(testenv.CanonicalItems([]map[string]types.AttributeValue{it}), testenv.CanonicalItems([]map[string]types.AttributeValue{got[k]})); d != "" {
			t.Errorf("item %s of another type changed (-before +after):\n%s", k, d)
		}
	}
	r = runCLI(t, "verify", "--mapping", file, "--source", src, "--endpoint-url", dynalite(t).Endpoint, "--table", table)
	if r.code != ExitOK {
		t.Errorf("verify after prune: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	slices.Sort(out)
	return out
}
