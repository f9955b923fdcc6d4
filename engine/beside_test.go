package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/verify"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// A comparison beside the follow that would put a new item under a key an
// item of another type holds (one the comparison does not read) rejects it,
// naming that type, and hands nothing to the follow; a key that is free,
// or held by one of the compared types, is not a collision.
func TestBesideApplierKeepsAnotherTypesItem(t *testing.T) {
	ctx := context.Background()
	c, err := load.NewClient(ctx, load.ClientConfig{EndpointURL: testenv.SharedDynalite(t).Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	table := testenv.TableName("beside")
	s := types.ScalarAttributeTypeS
	if _, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String(table), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: s}, {AttributeName: aws.String("SK"), AttributeType: s}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange}}}); err != nil {
		t.Fatal(err)
	}
	item := func(pk, typ string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: "A"},
			"type": &types.AttributeValueMemberS{Value: typ}}
	}
	for pk, typ := range map[string]string{"P#1": "Other", "P#2": "T"} {
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item(pk, typ)}); err != nil {
			t.Fatal(err)
		}
	}
	var rejects []pipeline.Reject
	x := &besideApplier{byType: map[string]int64{}, client: c, table: table, typeAttr: "type", keyAttrs: [2]string{"PK", "SK"},
		guard: []string{"T"}, reject: func(r pipeline.Reject) error { rejects = append(rejects, r); return nil }}
	w := func(pk string) verify.Write {
		return verify.Write{ItemRef: outcome.ItemRef{PK: pk, SK: "A"}, Entity: "E", Item: item(pk, "T"), Missing: true}
	}
	// x.b is nil: a write handed to the follow would panic.
	if err := x.Put(ctx, w("P#1")); err != nil {
		t.Fatal(err)
	}
	if len(rejects) != 1 || x.puts != 0 || x.rejected != 1 || !strings.Contains(rejects[0].Reason, "an item of type Other") || rejects[0].ItemKey["PK"] != "P#1" {
		t.Errorf("put over another type's item: rejects %+v, %d handed, %d counted rejected; want P#1 rejected as held by type Other, none handed, 1 counted", rejects, x.puts, x.rejected)
	}
	for _, pk := range []string{"P#2", "P#3"} {
		if holder, err := x.holder(ctx, w(pk)); err != nil || holder != "" {
			t.Errorf("holder of %s: %q, %v; want none (held by a compared type, or free)", pk, holder, err)
		}
	}
}
