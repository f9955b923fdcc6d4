// Package load writes items to their destination through a Sink: DynamoDB
// with BatchWriteItem today, a null sink for measuring extract and
// transform alone. It also creates the target table.
package load

import (
	"context"
	"fmt"
	"strings"

	"github.com/pg2dynamo/pg2dynamo/transform"
)

// MaxBatchItems is the most items one Write receives: BatchWriteItem's
// limit of 25 put or delete requests.
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html
const MaxBatchItems = 25

// Sink receives items in batches. Implementations must be safe for
// concurrent use: the pipeline calls Write from several writers at once.
// Package load/sinktest checks this contract; every Sink passes it.
type Sink interface {
	// Write writes batch (1 to MaxBatchItems items, no two with the same
	// primary key): puts each item, or deletes it by its key when it is
	// marked transform.Item.Delete. It returns nil when every item was written; a
	// *BatchError when some could not be (the others were written); any
	// other error when the run cannot go on. It honours ctx cancellation.
	Write(ctx context.Context, batch []transform.Item) error
}

// WriteUnitCounter is a Sink that can stop asking for the write units
// its writes consume (DynamoDB's ReturnConsumedCapacity), for a writer
// that reports none.
type WriteUnitCounter interface {
	CountWriteUnits(on bool)
}

var _ WriteUnitCounter = (*DynamoDB)(nil)

// ThrottleCounter is a Sink that counts the requests its destination
// throttled, for a pipeline adjusting its writers (pipeline.Autoscale).
type ThrottleCounter interface {
	// Throttles is the number of write requests throttled so far: for
	// DynamoDB, answered ThrottlingException or
	// ProvisionedThroughputExceededException (then retried by the SDK),
	// or with UnprocessedItems.
	Throttles() int64
}

// ItemError is why one item of a batch was not written.
type ItemError struct {
	// Index is the item's position in the batch (from 0).
	Index int
	// Err is why, e.g. DynamoDB's ValidationException and its message.
	Err error
}

// BatchError lists the items of a batch that were not written. Per-item
// failure is data: the pipeline records each in the rejects file.
type BatchError struct {
	Failed []ItemError
}

func (e *BatchError) Error() string {
	msgs := make([]string, 0, len(e.Failed))
	for _, f := range e.Failed {
		msgs = append(msgs, fmt.Sprintf("item %d: %v", f.Index, f.Err))
	}
	return fmt.Sprintf("%d items not written: %s", len(e.Failed), strings.Join(msgs, "; "))
}

// SinkFunc is a function used as a Sink (as http.HandlerFunc is a
// Handler): Write calls it. It must be safe for concurrent use.
type SinkFunc func(ctx context.Context, batch []transform.Item) error

// Write calls f.
func (f SinkFunc) Write(ctx context.Context, batch []transform.Item) error { return f(ctx, batch) }

// Null is a Sink that discards every item: extract and transform alone.
type Null struct{}

// Write discards batch and returns nil, cancelled ctx or not: there is
// nothing to stop.
func (Null) Write(context.Context, []transform.Item) error { return nil }
