package verify

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
)

// ReadAPI is all verify calls on DynamoDB: DescribeTable once, Scan for
// the table pass (segmented, strongly consistent) and Query for the access
// patterns, through the SDK's paginators. It writes nothing.
// *dynamodb.Client implements it. An implementation must be safe for
// concurrent use: the Scan segments run in parallel.
type ReadAPI interface {
	dynamodb.DescribeTableAPIClient
	dynamodb.ScanAPIClient
	dynamodb.QueryAPIClient
}

var _ ReadAPI = (*dynamodb.Client)(nil)

// source is what Compare reads from PostgreSQL apart from the rows the
// items are derived from (deriveFunc): each entity's count(*), parameter
// tuples sampled for the access patterns, the rows of each item
// collection a pattern reads whole, and the order of source values
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
	// CountMatching is extract.Source.CountMatching: how many rows of
	// other hold, pair by pair, the text of the home row's columns.
	CountMatching(ctx context.Context, home mapping.Source, homeCols []string, values []any, other mapping.Source,
		pairs []extract.ColumnPair, notNull []string) (int64, error)
	ranker
}

var _ source = (*extract.Source)(nil)

// deriveFunc derives every item from the source and hands them to sink,
// as pipeline.Run does (rows the duplicate check rejects give no item);
// the summary has one EntityStats per plan, in plan order. Compare's is
// pipeline.Run on its *extract.Source, with one writer.
type deriveFunc func(ctx context.Context, sink load.Sink) (*pipeline.Summary, error)
