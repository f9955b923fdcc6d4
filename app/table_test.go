package app

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

const gsiMapping = `name: accounts
table:
  name: accounts
  gsis:
    - {name: GSI1, partition_key: GSI1PK, sort_key: GSI1SK, projection: INCLUDE, non_key_attributes: [balance]}
    - {name: Inverted, partition_key: SK, sort_key: PK, projection: KEYS_ONLY}
entities:
  Account:
    source: {table: accounts}
    pk: ACCOUNT#${id}
    sk: OWNER#${owner}
    indexes:
      GSI1: {pk: "OWNER#${owner}", sk: "ACCOUNT#${id}", sparse: true}
    attributes: {select: [id, balance]}
`

// --create-table creates the GSIs the mapping declares; the items carry
// their index keys, and a GSI Query finds them.
func TestCreateTableWithGSIs(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE accounts (id integer PRIMARY KEY, owner text NOT NULL, balance numeric);
		INSERT INTO accounts VALUES (1, 'ann', 10), (2, 'bob', 20), (3, 'ann', 30);`)
	table := testenv.TableName("gsi")
	r := runCLI(t, migrateArgs(t, writeMapping(t, gsiMapping), url, table, "--create-table")...)
	if r.code != ExitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	c := dynamoClient(t)
	out, err := c.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, g := range out.Table.GlobalSecondaryIndexes {
		var keys []string
		for _, k := range g.KeySchema {
			keys = append(keys, aws.ToString(k.AttributeName)+" "+string(k.KeyType))
		}
		got[aws.ToString(g.IndexName)] = strings.Join(keys, ", ") + " / " + string(g.Projection.ProjectionType) + " " + strings.Join(g.Projection.NonKeyAttributes, ",")
	}
	want := map[string]string{
		"GSI1":     "GSI1PK HASH, GSI1SK RANGE / INCLUDE balance",
		"Inverted": "SK HASH, PK RANGE / KEYS_ONLY ",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("GSIs (-want +got):\n%s", d)
	}

	q := &dynamodb.QueryInput{
		TableName: aws.String(table), IndexName: aws.String("GSI1"),
		KeyConditionExpression:    aws.String("GSI1PK = :o"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":o": &types.AttributeValueMemberS{Value: "OWNER#ann"}},
	}
	var ids []string
	for _, it := range queryAll(t, c, q) {
		ids = append(ids, str(it["GSI1SK"]))
	}
	if d := cmp.Diff([]string{"ACCOUNT#0000000001", "ACCOUNT#0000000003"}, ids); d != "" {
		t.Errorf("GSI1 query for OWNER#ann (-want +got):\n%s", d)
	}

	// The same table against a mapping with other keys is refused before
	// anything is written (exit 2), naming both.
	other := strings.Replace(gsiMapping, "  name: accounts\n", "  name: accounts\n  sort_key: RK\n", 1)
	r = runCLI(t, migrateArgs(t, writeMapping(t, other), url, table)...)
	wantErr := "pg2dynamo: table " + table + " does not match the mapping: it has key schema (partition key PK, sort key SK), the mapping expects (partition key PK, sort key RK)\n"
	if r.code != ExitUsage || r.stderr != wantErr {
		t.Errorf("exit %d, stderr:\n%s\nwant exit %d, stderr:\n%s", r.code, r.stderr, ExitUsage, wantErr)
	}
}
