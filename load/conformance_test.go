package load_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/sinktest"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// maxItemSize is DynamoDB's largest item, 400 KB (names and values, UTF-8).
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html
const maxItemSize = 400 * 1024

// The DynamoDB sink passes the sink conformance suite against dynalite,
// one table per subtest, created by EnsureTable from a mapping.
func TestDynamoDBConformance(t *testing.T) {
	ctx := context.Background()
	client, err := load.NewClient(ctx, load.ClientConfig{EndpointURL: testenv.SharedDynalite(t).Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	sinktest.Test(t, sinktest.Harness{
		Name:         "load.DynamoDB",
		PartitionKey: "PK", SortKey: "SK",
		New: func(t *testing.T) sinktest.Target {
			table := newTable(t, client)
			return sinktest.Target{Sink: load.NewDynamoDB(client, table, "PK", "SK"), Read: batchGet(client, table)}
		},
		Refusals: map[string]func(transform.Item) transform.Item{
			"item over 400 KB": func(it transform.Item) transform.Item {
				return with(it, "big", &types.AttributeValueMemberS{Value: strings.Repeat("x", maxItemSize)})
			},
			"partition key of type N": func(it transform.Item) transform.Item {
				return with(it, "PK", &types.AttributeValueMemberN{Value: "1"})
			},
		},
		Unwritable: func(*testing.T) load.Sink {
			return load.NewDynamoDB(client, testenv.TableName("missing"), "PK", "SK")
		},
	})
}

// with returns a copy of it with attribute name set to v.
func with(it transform.Item, name string, v types.AttributeValue) transform.Item {
	attrs := make(map[string]types.AttributeValue, len(it.Attrs)+1)
	for k, a := range it.Attrs {
		attrs[k] = a
	}
	attrs[name] = v
	return transform.Item{Attrs: attrs}
}

// newTable creates a table named uniquely with EnsureTable, keyed PK and
// SK, and deletes it when the test ends.
func newTable(t *testing.T, client *dynamodb.Client) string {
	t.Helper()
	name := testenv.TableName("sinktest")
	m, err := mapping.Parse("m.yaml", []byte(fmt.Sprintf(`table:
  name: %s
entities:
  E:
    source: {table: e}
    pk: E#${id}
    sk: E
`, name)))
	if err != nil {
		t.Fatal(err)
	}
	if created, err := load.EnsureTable(context.Background(), client, m, true); err != nil || !created {
		t.Fatalf("EnsureTable: created %v, %v", created, err)
	}
	t.Cleanup(func() {
		_, _ = client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	return name
}

// batchGet reads items by key with BatchGetItem, 100 keys a request,
// re-asking for UnprocessedKeys.
func batchGet(client *dynamodb.Client, table string) func(context.Context, []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error) {
	return func(ctx context.Context, keys []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error) {
		var out []map[string]types.AttributeValue
		for len(keys) > 0 {
			n := min(len(keys), 100)
			req := map[string]types.KeysAndAttributes{table: {Keys: keys[:n], ConsistentRead: aws.Bool(true)}}
			keys = keys[n:]
			for len(req) > 0 {
				res, err := client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
				if err != nil {
					return nil, err
				}
				out = append(out, res.Responses[table]...)
				req = res.UnprocessedKeys
			}
		}
		return out, nil
	}
}
