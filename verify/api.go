package verify

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
)

// ReadAPI is what verify calls on DynamoDB, and all of it: DescribeTable
// once (does the table exist, and its approximate ItemCount), Scan for the
// table pass (segmented, strongly consistent, pages of scanPageItems) and
// Query for the access patterns (pages of queryPageItems, following
// LastEvaluatedKey through the SDK's paginators). It writes nothing.
// *dynamodb.Client implements it; tests use a fake at this seam. An
// implementation must be safe for concurrent use: the Scan segments run
// in parallel.
type ReadAPI interface {
	dynamodb.DescribeTableAPIClient
	dynamodb.ScanAPIClient
	dynamodb.QueryAPIClient
}

var _ ReadAPI = (*dynamodb.Client)(nil)

// source is what Compare reads from PostgreSQL apart from the rows the
// items are derived from (deriveFunc): each entity's count(*), parameter
// tuples sampled for the access patterns, and the order of source values
// (ranker). *extract.Source implements it, in the snapshot the caller
// began; tests use a fake. Not called concurrently.
type source interface {
	// Count is PostgreSQL's count(*) of entity e's source.
	Count(ctx context.Context, e *mapping.Entity) (int64, error)
	// SampleParams returns up to n distinct tuples of the columns cols of
	// src (all of them when there are no more), none with a NULL, one Go
	// value per column in cols' order, each as extract.Source.Stream reads
	// its column.
	SampleParams(ctx context.Context, src mapping.Source, cols []string, n int) ([][]any, error)
	ranker
}

var _ source = (*extract.Source)(nil)

// deriveFunc derives every item from the source and hands them to sink,
// as pipeline.Run does (rows the duplicate check rejects give no item);
// the summary has one EntityStats per plan, in plan order. Compare's is
// pipeline.Run on its *extract.Source, with one writer.
type deriveFunc func(ctx context.Context, sink load.Sink) (*pipeline.Summary, error)

// describeTable returns the description of table name, or nil when it
// does not exist. For a *dynamodb.Client it is load.DescribeTable, the
// preflight (at most 3 attempts within load.PreflightTimeout, and an
// error saying DynamoDB cannot be reached). load.DescribeTable takes a
// *dynamodb.Client, so any other ReadAPI (a fake, or a client the caller
// wrapped) is asked once, with ctx as given: ResourceNotFoundException is
// nil, any other error is returned wrapped.
func describeTable(ctx context.Context, client ReadAPI, name string) (*types.TableDescription, error) {
	if c, ok := client.(*dynamodb.Client); ok {
		return load.DescribeTable(ctx, c, name)
	}
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	var nf *types.ResourceNotFoundException
	switch {
	case errors.As(err, &nf):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("describe table %s: %w", name, err)
	}
	return out.Table, nil
}
