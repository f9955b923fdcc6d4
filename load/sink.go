// Package load writes items to their destination through a Sink (DynamoDB, or
// a null sink) and creates the target table.
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

// Sink receives items in batches. Implementations must be safe for concurrent
// use (several writers call Write); tools/sinktest checks the contract.
type Sink interface {
	// Write puts each item of batch (1 to MaxBatchItems, distinct keys) or
	// deletes those marked Delete. It returns nil, a *BatchError for items not
	// written (the others were), or another error when the run cannot go on;
	// it honours ctx.
	Write(ctx context.Context, batch []transform.Item) error
}

// WriteUnitCounter is a Sink that can stop asking for consumed write units.
type WriteUnitCounter interface {
	CountWriteUnits(on bool)
}

var _ WriteUnitCounter = (*DynamoDB)(nil)

// ThrottleCounter is a Sink counting throttled requests (pipeline.Autoscale).
type ThrottleCounter interface {
	// Throttles is the number of write requests throttled so far.
	Throttles() int64
}

// ItemError is why one item of a batch was not written.
type ItemError struct {
	// Index is the item's position in the batch (from 0).
	Index int
	// Err is why, e.g. DynamoDB's ValidationException and its message.
	Err error
}

// BatchError lists a batch's items not written; the pipeline rejects each.
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

// SinkFunc is a function used as a Sink; it must be safe for concurrent use.
type SinkFunc func(ctx context.Context, batch []transform.Item) error

// Write calls f.
func (f SinkFunc) Write(ctx context.Context, batch []transform.Item) error { return f(ctx, batch) }

// Null is a Sink that discards every item: extract and transform alone.
type Null struct{}

// Write discards batch and returns nil, cancelled ctx or not.
func (Null) Write(context.Context, []transform.Item) error { return nil }
