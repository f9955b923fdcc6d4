package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// TestDynaliteStore: a dynalite started with a store keeps its tables in
// that directory, so a second server on the same directory reads the item
// the first wrote, and one without a store does not.
func TestDynaliteStore(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"} {
		t.Setenv(k, v)
	}
	ctx := context.Background()
	store := filepath.Join(t.TempDir(), "store")
	key := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "A"}}
	get := func(d *dynalite) (map[string]types.AttributeValue, error) {
		c, err := load.NewClient(ctx, load.ClientConfig{EndpointURL: d.endpoint})
		if err != nil {
			return nil, err
		}
		out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("store"), Key: key, ConsistentRead: aws.Bool(true)})
		if err != nil {
			return nil, err
		}
		return out.Item, nil
	}
	put := func(d *dynalite) error {
		c, err := load.NewClient(ctx, load.ClientConfig{EndpointURL: d.endpoint})
		if err != nil {
			return err
		}
		if _, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{
			TableName:            aws.String("store"),
			AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS}},
			KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash}},
			BillingMode:          types.BillingModePayPerRequest,
		}); err != nil {
			return err
		}
		// ACTIVE once dynalite has written the table to its store, after it answered.
		if err := dynamodb.NewTableExistsWaiter(c).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("store")}, time.Minute); err != nil {
			return err
		}
		_, err = c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("store"), Item: key})
		return err
	}

	d, err := startDynaliteIn(ctx, root, store)
	if err != nil {
		t.Fatal(err)
	}
	err = put(d)
	d.stop()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(store, "CURRENT")); err != nil {
		t.Fatalf("no LevelDB database in the store: %v", err)
	}

	again, err := startDynaliteIn(ctx, root, store)
	if err != nil {
		t.Fatal(err)
	}
	item, err := get(again)
	again.stop()
	if err != nil || item == nil {
		t.Fatalf("the same store, a new server: item %v, %v; want the item the first wrote", item, err)
	}

	mem, err := startDynalite(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.stop()
	if _, err := get(mem); err == nil {
		t.Fatal("a server in memory found table store: want ResourceNotFoundException")
	}
}
