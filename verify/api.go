package verify

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
)

// ReadAPI is all verify calls on DynamoDB: DescribeTable, Scan (segmented,
// strongly consistent) and Query, through the SDK's paginators; it writes
// nothing. *dynamodb.Client implements it. Implementations must be safe for
// concurrent use (parallel Scan segments).
type ReadAPI interface {
	dynamodb.DescribeTableAPIClient
	dynamodb.ScanAPIClient
	dynamodb.QueryAPIClient
}

var _ ReadAPI = (*dynamodb.Client)(nil)

// source is what Compare reads from PostgreSQL besides the rows (deriveFunc):
// counts, sampled parameter tuples, item collection row counts and source value
// order. *extract.Source implements it in the caller's snapshot. Not called
// concurrently.
type source interface {
	// Count is PostgreSQL's count(*) of entity e's source.
	Count(ctx context.Context, e *mapping.Entity) (int64, error)
	// SampleParams returns up to n distinct NULL-free tuples of src's cols, one
	// Go value per column as extract.Source.Stream reads it.
	SampleParams(ctx context.Context, src mapping.Source, cols []string, n int) ([][]any, error)
	// CountMatching is extract.Source.CountMatching.
	CountMatching(ctx context.Context, home mapping.Source, homeCols []string, values []any, other mapping.Source,
		pairs []extract.ColumnPair, notNull []string, exclude []map[string]any) (int64, error)
	// CountJoined is extract.Source.CountJoined.
	CountJoined(ctx context.Context, parent, child mapping.Source, join [][2]string, exclude []map[string]any) (int64, error)
	ranker
}

var _ source = (*extract.Source)(nil)

// deriveFunc derives every item into sink as pipeline.Run does (duplicate-check
// rejects give none), telling onReject of each rejected row, and returns one
// EntityStats per plan in order.
type deriveFunc func(ctx context.Context, sink load.Sink, onReject func(pipeline.Reject) error) (*pipeline.Summary, error)
