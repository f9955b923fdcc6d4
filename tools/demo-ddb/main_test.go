package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// runCmd runs the helper in-process and returns its exit code and output.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// newTable creates a table with partition key PK and sort key SK on
// dynalite and writes items, each given as attribute → string (a value of
// user_id is written as a number).
func newTable(t *testing.T, endpoint string, items []map[string]string) string {
	t.Helper()
	ctx := context.Background()
	client, err := newClient(ctx, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	table := testenv.TableName("demo-ddb")
	_, err = client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String(table),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("SK"), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange},
		},
		BillingMode: types.BillingModePayPerRequest,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		item := map[string]types.AttributeValue{}
		for k, v := range it {
			if k == "user_id" {
				item[k] = &types.AttributeValueMemberN{Value: v}
			} else {
				item[k] = &types.AttributeValueMemberS{Value: v}
			}
		}
		if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	return table
}

// TestFindKeyQueryDelete runs the three subcommands as scripts/demo.sh does:
// find a user's partition key by its attributes, print the user's item
// collection newest first, then delete the table.
func TestFindKeyQueryDelete(t *testing.T) {
	endpoint := testenv.SharedDynalite(t).Endpoint
	table := newTable(t, endpoint, []map[string]string{
		{"PK": "USER#007", "SK": "USER#007", "type": "User", "user_id": "7", "name": "Ada <admin>"},
		{"PK": "USER#007", "SK": "TICKET#2025-01-02#1", "type": "Ticket", "subject": "older"},
		{"PK": "USER#007", "SK": "TICKET#2025-03-04#2", "type": "Ticket", "subject": "newer"},
		{"PK": "USER#008", "SK": "USER#008", "type": "User", "user_id": "8"},
	})

	code, out, errOut := runCmd(t, "find-key", "--endpoint-url", endpoint, "--table", table, "--where", "type=User", "--where", "user_id=7")
	if code != exitOK || out != "PK=USER#007\n" {
		t.Fatalf("find-key: exit %d, stdout %q, stderr %q; want PK=USER#007", code, out, errOut)
	}

	code, out, errOut = runCmd(t, "query", "--endpoint-url", endpoint, "--table", table, "--pk", "PK=USER#007", "--desc", "--min-items", "3")
	if code != exitOK {
		t.Fatalf("query: exit %d, stderr %q", code, errOut)
	}
	want := []string{
		`Query table ` + table + `: PK = "USER#007", sort key descending (ScanIndexForward false); 3 items in 1 page, in the order the Query returned them:`,
		`  PK=USER#007  SK=USER#007  type=User`,
		`      {"name":"Ada <admin>","user_id":7}`,
		`  PK=USER#007  SK=TICKET#2025-03-04#2  type=Ticket`,
		`      {"subject":"newer"}`,
		`  PK=USER#007  SK=TICKET#2025-01-02#1  type=Ticket`,
		`      {"subject":"older"}`,
	}
	if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("query printed\n%s\nwant\n%s", out, strings.Join(want, "\n"))
	}

	code, _, errOut = runCmd(t, "query", "--endpoint-url", endpoint, "--table", table, "--pk", "PK=USER#007",
		"--sk-begins-with", "SK=TICKET#", "--min-items", "3")
	if code != exitError || !strings.Contains(errOut, "2 items, want at least 3") {
		t.Errorf("query --min-items 3 of 2 tickets: exit %d, stderr %q; want exit 1 naming the count", code, errOut)
	}

	code, out, errOut = runCmd(t, "delete-tables", "--endpoint-url", endpoint, table, table+"-absent")
	if want := "deleted table " + table + "\ntable " + table + "-absent: not there\n"; code != exitOK || out != want {
		t.Fatalf("delete-tables: exit %d, stdout %q, stderr %q; want %q", code, out, errOut, want)
	}
	client, _ := newClient(context.Background(), endpoint)
	_, err := client.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	var notFound *types.ResourceNotFoundException
	if !errors.As(err, &notFound) {
		t.Errorf("after delete-tables, DescribeTable: %v; want ResourceNotFoundException", err)
	}
}

// TestUsage checks that argument mistakes exit 2 without a request.
func TestUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "usage:"},
		{"unknown command", []string{"scan"}, `unknown command "scan"`},
		{"no endpoint", []string{"delete-tables", "t"}, "--endpoint-url is required"},
		{"query without pk", []string{"query", "--endpoint-url", "http://127.0.0.1:1", "--table", "t"}, "query needs --table and --pk"},
		{"pk without =", []string{"query", "--endpoint-url", "http://127.0.0.1:1", "--table", "t", "--pk", "PK"}, `want NAME=VALUE`},
		{"find-key without where", []string{"find-key", "--endpoint-url", "http://127.0.0.1:1", "--table", "t"}, "at least one --where"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCmd(t, tt.args...)
			if code != exitUsage || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, errOut, tt.want)
			}
		})
	}
}
