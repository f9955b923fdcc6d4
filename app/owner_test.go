package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// writeNamedMapping writes text as name in a new directory and returns its path.
func writeNamedMapping(t *testing.T, name, text string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

const otherMapping = `version: 1
name: clients
table: {name: shop}
entities:
  Client:
    source: {table: customers}
    pk: CLIENT#${id}
    sk: CLIENT
`

// A table --create-table made carries the mapping's tags; another
// mapping's run into it is refused (exit 2) with nothing written, and
// goes through with --allow-other-mapping.
func TestTableTaggedForAnotherMapping(t *testing.T) {
	parallel(t)
	src := testenv.NewDatabase(t)
	testenv.Exec(t, src, pruneSQL)
	shop := writeNamedMapping(t, "shop.yaml", pruneMapping)
	table := testenv.TableName("owner")
	if r := runCLI(t, migrateArgs(t, shop, src, table, "--create-table")...); r.code != ExitOK {
		t.Fatalf("migrate: exit %d\n%s", r.code, r.stderr)
	}
	c := dynamoClient(t)
	td, err := load.DescribeTable(context.Background(), c, table)
	if err != nil || td == nil {
		t.Fatalf("describe %s: %v", table, err)
	}
	o, tagged, err := load.TableOwner(context.Background(), c, aws.ToString(td.TableArn))
	if err != nil || !tagged || o.Name != "shop" || len(o.Hash) != 16 {
		t.Fatalf("tags of the table created: %+v, tagged %v, %v; want name shop and a 16-digit hash", o, tagged, err)
	}
	before := len(scanAll(t, c, table))

	other := writeNamedMapping(t, "clients.yaml", otherMapping)
	r := runCLI(t, migrateArgs(t, other, src, table)...)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "belongs to mapping shop") || !strings.Contains(r.stderr, "--allow-other-mapping") {
		t.Fatalf("another mapping's run: exit %d, want %d naming mapping shop and --allow-other-mapping\n%s", r.code, ExitUsage, r.stderr)
	}
	if n := len(scanAll(t, c, table)); n != before {
		t.Errorf("the refused run changed the table: %d items, were %d", n, before)
	}
	if r := runCLI(t, migrateArgs(t, other, src, table, "--allow-other-mapping")...); r.code != ExitOK {
		t.Fatalf("--allow-other-mapping: exit %d\n%s", r.code, r.stderr)
	}
	if n := len(scanAll(t, c, table)); n != before+3 {
		t.Errorf("--allow-other-mapping: %d items, want %d (the 3 clients added)", n, before+3)
	}
}

// An untagged table holding items of none of the mapping's types is
// refused (exit 2) with how many and of which types, nothing written;
// --allow-other-items writes; then, holding the mapping's types, it is
// written into with a note.
func TestUntaggedTableWithOtherItems(t *testing.T) {
	parallel(t)
	src := testenv.NewDatabase(t)
	testenv.Exec(t, src, pruneSQL)
	shop := writeNamedMapping(t, "shop.yaml", pruneMapping)
	table := testenv.TableName("untagged")
	m, err := mapping.Parse(shop, []byte(pruneMapping))
	if err != nil {
		t.Fatal(err)
	}
	m.Table.Name = table
	c := dynamoClient(t)
	if _, err := load.EnsureTable(context.Background(), c, m, true); err != nil {
		t.Fatal(err)
	}
	for i, typ := range []string{"Widget", "Widget", "Widget", ""} {
		it := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "W#" + string(rune('a'+i))}, "SK": &types.AttributeValueMemberS{Value: "W"}}
		if typ != "" {
			it["type"] = &types.AttributeValueMemberS{Value: typ}
		}
		if _, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: it}); err != nil {
			t.Fatal(err)
		}
	}
	r := runCLI(t, migrateArgs(t, shop, src, table)...)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "holds 4 items: 1 without a type, 3 of type Widget, none of the mapping's types (Customer, Order)") {
		t.Fatalf("migrate into a table of other items: exit %d, want %d and what it holds\n%s", r.code, ExitUsage, r.stderr)
	}
	if n := len(scanAll(t, c, table)); n != 4 {
		t.Errorf("the refused run changed the table: %d items, want 4", n)
	}
	if r := runCLI(t, migrateArgs(t, shop, src, table, "--allow-other-items")...); r.code != ExitOK {
		t.Fatalf("--allow-other-items: exit %d\n%s", r.code, r.stderr)
	}
	r = runCLI(t, migrateArgs(t, shop, src, table)...)
	if r.code != ExitOK || !strings.Contains(r.stderr, "is not tagged for a mapping and holds 12 items") {
		t.Fatalf("a run into the untagged table holding the mapping's items: exit %d, want 0 and a note\n%s", r.code, r.stderr)
	}
}
