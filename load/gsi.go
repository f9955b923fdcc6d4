package load

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// GSIAPI is what CreateGSI and DeleteGSI call: UpdateTable and DescribeTable.
type GSIAPI interface {
	dynamodb.DescribeTableAPIClient
	UpdateTable(ctx context.Context, in *dynamodb.UpdateTableInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateTableOutput, error)
}

var _ GSIAPI = (*dynamodb.Client)(nil)

// GSIPoll is how often CreateGSI and DeleteGSI poll the table while waiting.
var GSIPoll = 2 * time.Second

// CreateGSIInput is the UpdateTable request adding the mapping's GSI name, one
// index a request.
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTable.html
func CreateGSIInput(m *mapping.Mapping, name string) (*dynamodb.UpdateTableInput, error) {
	in := CreateTableInput(m)
	i := slices.IndexFunc(in.GlobalSecondaryIndexes, func(g types.GlobalSecondaryIndex) bool { return aws.ToString(g.IndexName) == name })
	if i < 0 {
		return nil, fmt.Errorf("the mapping declares no GSI %s", name)
	}
	g := in.GlobalSecondaryIndexes[i]
	up := &dynamodb.UpdateTableInput{TableName: in.TableName, GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{
		Create: &types.CreateGlobalSecondaryIndexAction{IndexName: g.IndexName, KeySchema: g.KeySchema, Projection: g.Projection,
			ProvisionedThroughput: g.ProvisionedThroughput, OnDemandThroughput: g.OnDemandThroughput, WarmThroughput: g.WarmThroughput}}}}
	for _, d := range in.AttributeDefinitions {
		if slices.ContainsFunc(g.KeySchema, func(k types.KeySchemaElement) bool {
			return aws.ToString(k.AttributeName) == aws.ToString(d.AttributeName)
		}) {
			up.AttributeDefinitions = append(up.AttributeDefinitions, d)
		}
	}
	return up, nil
}

// CreateGSI adds the mapping's GSI name and waits, up to timeout, until it is
// ACTIVE and backfilled; an endpoint that ignores it (dynalite) is an error.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.OnlineOps.html
func CreateGSI(ctx context.Context, client GSIAPI, m *mapping.Mapping, name string, timeout time.Duration) error {
	in, err := CreateGSIInput(m, name)
	if err != nil {
		return err
	}
	if _, err := client.UpdateTable(ctx, in); err != nil {
		return fmt.Errorf("create GSI %s on table %s: %w", name, m.Table.Name, err)
	}
	return waitGSI(ctx, client, m.Table.Name, name, timeout, gsiReady(fmt.Errorf("create GSI %s on table %s: UpdateTable succeeded, and the table lists no such index: the endpoint does not create indexes on an existing table", name, m.Table.Name)))
}

// EnsureGSI makes sure the mapping's GSI name is ACTIVE and backfilled,
// creating or awaiting it; created reports whether it sent UpdateTable.
func EnsureGSI(ctx context.Context, client GSIAPI, m *mapping.Mapping, name string, timeout time.Duration) (created bool, err error) {
	td, err := DescribeTable(ctx, client, m.Table.Name)
	if err != nil {
		return false, err
	}
	if td == nil {
		return false, fmt.Errorf("GSI %s: table %s does not exist", name, m.Table.Name)
	}
	if FindGSI(td, name) == nil {
		return true, CreateGSI(ctx, client, m, name, timeout)
	}
	return false, waitGSI(ctx, client, m.Table.Name, name, timeout, gsiReady(fmt.Errorf("GSI %s of table %s: the index is no longer listed (deleted meanwhile?)", name, m.Table.Name)))
}

func gsiReady(absent error) func(*types.GlobalSecondaryIndexDescription) (bool, error) {
	return func(g *types.GlobalSecondaryIndexDescription) (bool, error) {
		if g == nil {
			return false, absent
		}
		return g.IndexStatus == types.IndexStatusActive && !aws.ToBool(g.Backfilling), nil
	}
}

// DeleteGSI removes GSI name from table and waits, up to timeout, until gone.
func DeleteGSI(ctx context.Context, client GSIAPI, table, name string, timeout time.Duration) error {
	_, err := client.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(table),
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Delete: &types.DeleteGlobalSecondaryIndexAction{IndexName: aws.String(name)}}}})
	if err != nil {
		return fmt.Errorf("delete GSI %s of table %s: %w", name, table, err)
	}
	return waitGSI(ctx, client, table, name, timeout, func(g *types.GlobalSecondaryIndexDescription) (bool, error) { return g == nil, nil })
}

// waitGSI polls table until done holds for GSI name, up to timeout.
func waitGSI(ctx context.Context, client dynamodb.DescribeTableAPIClient, table, name string, timeout time.Duration,
	done func(*types.GlobalSecondaryIndexDescription) (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		td, err := DescribeTable(ctx, client, table)
		if err != nil {
			return err
		}
		if td == nil {
			return fmt.Errorf("table %s no longer exists", table)
		}
		ok, err := done(FindGSI(td, name))
		if ok || err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("GSI %s of table %s: not done after %s (DescribeTable shows it %s); it goes on in DynamoDB: run again once it is", name, table, timeout, gsiState(FindGSI(td, name)))
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(GSIPoll):
		}
	}
}

// FindGSI returns td's GSI name, or nil.
func FindGSI(td *types.TableDescription, name string) *types.GlobalSecondaryIndexDescription {
	for i := range td.GlobalSecondaryIndexes {
		if aws.ToString(td.GlobalSecondaryIndexes[i].IndexName) == name {
			return &td.GlobalSecondaryIndexes[i]
		}
	}
	return nil
}

func gsiState(g *types.GlobalSecondaryIndexDescription) string {
	if g == nil {
		return "absent"
	}
	if aws.ToBool(g.Backfilling) {
		return string(g.IndexStatus) + ", backfilling"
	}
	return string(g.IndexStatus)
}
