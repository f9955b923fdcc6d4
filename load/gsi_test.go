package load

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// gsiFake answers UpdateTable by recording it, and DescribeTable with
// the states of states, one a call, the last one repeated.
type gsiFake struct {
	updates []*dynamodb.UpdateTableInput
	states  [][]types.GlobalSecondaryIndexDescription
	calls   int
}

func (f *gsiFake) UpdateTable(_ context.Context, in *dynamodb.UpdateTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateTableOutput, error) {
	f.updates = append(f.updates, in)
	return &dynamodb.UpdateTableOutput{}, nil
}

func (f *gsiFake) DescribeTable(_ context.Context, in *dynamodb.DescribeTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	s := f.states[min(f.calls, len(f.states)-1)]
	f.calls++
	return &dynamodb.DescribeTableOutput{Table: &types.TableDescription{TableName: in.TableName, TableStatus: types.TableStatusActive, GlobalSecondaryIndexes: s}}, nil
}

func indexIn(status types.IndexStatus, backfilling bool) []types.GlobalSecondaryIndexDescription {
	return []types.GlobalSecondaryIndexDescription{{IndexName: aws.String("Inverted"), IndexStatus: status, Backfilling: aws.Bool(backfilling)}}
}

// CreateGSI sends one UpdateTable creating the one index, with its key
// schema, projection and the definitions of its key attributes only, then
// waits while DescribeTable shows it CREATING, then ACTIVE but
// backfilling, until ACTIVE and backfilled.
func TestCreateGSI(t *testing.T) {
	defer func(p time.Duration) { GSIPoll = p }(GSIPoll)
	GSIPoll = time.Millisecond
	m, err := mapping.Parse("m.yaml", []byte(schemaMapping))
	if err != nil {
		t.Fatal(err)
	}
	f := &gsiFake{states: [][]types.GlobalSecondaryIndexDescription{indexIn(types.IndexStatusCreating, false),
		indexIn(types.IndexStatusActive, true), indexIn(types.IndexStatusActive, false)}}
	if err := CreateGSI(context.Background(), f, m, "Inverted", time.Minute); err != nil {
		t.Fatal(err)
	}
	if len(f.updates) != 1 || f.calls != 3 {
		t.Fatalf("%d UpdateTable and %d DescribeTable; want 1 and 3 (until ACTIVE and backfilled)", len(f.updates), f.calls)
	}
	want := &dynamodb.UpdateTableInput{TableName: aws.String("tbl"),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: "S"}, {AttributeName: aws.String("SK"), AttributeType: "S"}},
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{IndexName: aws.String("Inverted"),
			KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("SK"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("PK"), KeyType: types.KeyTypeRange}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}}}}}
	got, _ := json.Marshal(f.updates[0])
	if w, _ := json.Marshal(want); string(got) != string(w) {
		t.Errorf("UpdateTable request:\n%s\nwant\n%s", got, w)
	}
}

// An endpoint that accepts the request and creates no index (dynalite)
// is an error at the first DescribeTable, not a wait until the timeout.
func TestCreateGSIIgnored(t *testing.T) {
	m, err := mapping.Parse("m.yaml", []byte(schemaMapping))
	if err != nil {
		t.Fatal(err)
	}
	f := &gsiFake{states: [][]types.GlobalSecondaryIndexDescription{nil}}
	err = CreateGSI(context.Background(), f, m, "GSI1", time.Hour)
	if err == nil || !strings.Contains(err.Error(), "the endpoint does not create indexes") || f.calls != 1 {
		t.Fatalf("CreateGSI on an endpoint that ignores it: %v after %d DescribeTable; want an error at once", err, f.calls)
	}
}

// EnsureGSI on a table that lists the index already (a run that ended
// while DynamoDB was building it) sends no UpdateTable and waits while
// DescribeTable shows it CREATING, then ACTIVE but backfilling, until
// ACTIVE and backfilled; on a table that lacks it, it creates it.
func TestEnsureGSI(t *testing.T) {
	defer func(p time.Duration) { GSIPoll = p }(GSIPoll)
	GSIPoll = time.Millisecond
	m, err := mapping.Parse("m.yaml", []byte(schemaMapping))
	if err != nil {
		t.Fatal(err)
	}
	f := &gsiFake{states: [][]types.GlobalSecondaryIndexDescription{indexIn(types.IndexStatusCreating, false),
		indexIn(types.IndexStatusCreating, false), indexIn(types.IndexStatusActive, true), indexIn(types.IndexStatusActive, false)}}
	created, err := EnsureGSI(context.Background(), f, m, "Inverted", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if created || len(f.updates) != 0 || f.calls != 4 {
		t.Fatalf("index CREATING: created %v, %d UpdateTable and %d DescribeTable; want false, 0 and 4 (until ACTIVE and backfilled)", created, len(f.updates), f.calls)
	}
	f = &gsiFake{states: [][]types.GlobalSecondaryIndexDescription{nil, indexIn(types.IndexStatusCreating, false), indexIn(types.IndexStatusActive, false)}}
	created, err = EnsureGSI(context.Background(), f, m, "Inverted", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !created || len(f.updates) != 1 || f.calls != 3 {
		t.Fatalf("index absent: created %v, %d UpdateTable and %d DescribeTable; want true, 1 and 3", created, len(f.updates), f.calls)
	}
}
