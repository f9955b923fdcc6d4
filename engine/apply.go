package engine

import (
	"context"
	"errors"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify"
)

// tableApplier is the verify.Applier of migrate --changes-only and
// --prune. It puts items through the run's DynamoDB sink (load.DynamoDB:
// BatchWriteItem, 25 items a request, UnprocessedItems re-sent,
// --max-write-units, --retry-deadline) and deletes stale items with a
// DeleteItem conditional on their type (load.DynamoDB.DeleteIf): exactly
// `writers` goroutines take batches and deletes from one queue of as many,
// so a Put that finds it full waits, and at most 2 × writers batches of
// items are held. Items DynamoDB refuses (a *load.BatchError) are
// rejects, written to reject; any other error stops the comparison.
type tableApplier struct {
	ds       *load.DynamoDB
	typeAttr string
	keyAttrs [2]string
	writers  int
	reject   func(pipeline.Reject) error

	pending []verify.Write // the batch being filled, by the caller's goroutine
	w       *workers       // nil between Waits
	stats   applyStats
}

var _ verify.Applier = (*tableApplier)(nil)

// applyStats are a tableApplier's counts of writes acknowledged. Safe for
// concurrent use.
type applyStats struct {
	written, deleted, skipped, rejected, units atomic.Int64
	mu                                         sync.Mutex
	byType                                     map[string]int64 // deleted, by item type
}

func newTableApplier(ds *load.DynamoDB, typeAttr string, keyAttrs [2]string, writers int, reject func(pipeline.Reject) error) *tableApplier {
	return &tableApplier{ds: ds, typeAttr: typeAttr, keyAttrs: keyAttrs, writers: max(1, writers), reject: reject}
}

// Put adds w to the batch being filled, and queues the batch once it holds
// load.MaxBatchItems.
func (a *tableApplier) Put(ctx context.Context, w verify.Write) error {
	a.pending = append(a.pending, w)
	if len(a.pending) < load.MaxBatchItems {
		return nil
	}
	return a.flush(ctx)
}

// Delete queues the conditional delete of w's item.
func (a *tableApplier) Delete(ctx context.Context, w verify.Write) error {
	return a.queue(ctx, func(ctx context.Context) error { return a.delete(ctx, w) })
}

// Wait queues the batch being filled, then waits until every queued write
// is done, and returns the first error of any.
func (a *tableApplier) Wait(ctx context.Context) error {
	if err := a.flush(ctx); err != nil {
		return err
	}
	if a.w == nil {
		return nil
	}
	w := a.w
	a.w = nil
	return w.stop(ctx)
}

// abandon drops the batch being filled and waits for the writes queued
// (a comparison that failed): none is left running.
func (a *tableApplier) abandon(ctx context.Context) {
	a.pending = nil
	_ = a.Wait(ctx)
}

func (a *tableApplier) flush(ctx context.Context) error {
	if len(a.pending) == 0 {
		return nil
	}
	batch := a.pending
	a.pending = nil
	return a.queue(ctx, func(ctx context.Context) error { return a.put(ctx, batch) })
}

// queue hands task to the writers, starting them if they are not running;
// it waits while the queue is full. Once a writer has failed, it stops
// them and returns the error.
func (a *tableApplier) queue(ctx context.Context, task func(context.Context) error) error {
	if a.w == nil {
		a.w = startWorkers(ctx, a.writers)
	}
	select {
	case a.w.tasks <- task:
		return nil
	case <-a.w.ctx.Done():
		w := a.w
		a.w = nil
		return w.stop(ctx)
	}
}

// put writes batch with the sink, counting what DynamoDB acknowledged and
// rejecting the items it refused.
func (a *tableApplier) put(ctx context.Context, batch []verify.Write) error {
	items := make([]transform.Item, len(batch))
	for i, w := range batch {
		items[i] = transform.Item{Attrs: w.Item}
	}
	err := a.ds.Write(ctx, items)
	failed := map[int]error{}
	var be *load.BatchError
	switch {
	case errors.As(err, &be):
		for _, f := range be.Failed {
			failed[f.Index] = f.Err
		}
	case err != nil:
		return err
	}
	for i, w := range batch {
		ferr, bad := failed[i]
		if !bad {
			a.stats.written.Add(1)
			a.stats.units.Add(w.WriteUnits)
			continue
		}
		a.stats.rejected.Add(1)
		if a.reject != nil {
			rej := pipeline.Reject{Entity: w.Entity, ItemKey: pipeline.ItemKeyMap([2]string{w.PK, w.SK}, a.keyAttrs), Reason: ferr.Error()}
			if err := a.reject(rej); err != nil {
				return err
			}
		}
	}
	return nil
}

// delete deletes w's item on the condition that its type attribute still
// holds w.Type.
func (a *tableApplier) delete(ctx context.Context, w verify.Write) error {
	key := map[string]types.AttributeValue{a.keyAttrs[0]: &types.AttributeValueMemberS{Value: w.PK}}
	if a.keyAttrs[1] != "" {
		key[a.keyAttrs[1]] = &types.AttributeValueMemberS{Value: w.SK}
	}
	deleted, err := a.ds.DeleteIf(ctx, key, a.typeAttr, w.Type)
	switch {
	case err != nil:
		return err
	case !deleted:
		a.stats.skipped.Add(1)
		return nil
	}
	a.stats.deleted.Add(1)
	a.stats.units.Add(w.WriteUnits)
	a.stats.mu.Lock()
	defer a.stats.mu.Unlock()
	if a.stats.byType == nil {
		a.stats.byType = map[string]int64{}
	}
	a.stats.byType[w.Type]++
	return nil
}

// deletedByType returns the deletes acknowledged, by item type.
func (a *tableApplier) deletedByType() map[string]int64 {
	a.stats.mu.Lock()
	defer a.stats.mu.Unlock()
	return maps.Clone(a.stats.byType)
}

// workers are the goroutines of a tableApplier taking tasks from one
// queue until it is closed (stop) or one fails, which cancels ctx.
type workers struct {
	tasks chan func(context.Context) error
	g     *errgroup.Group
	ctx   context.Context
}

func startWorkers(ctx context.Context, n int) *workers {
	g, gctx := errgroup.WithContext(ctx)
	w := &workers{tasks: make(chan func(context.Context) error, n), g: g, ctx: gctx}
	for range n {
		g.Go(func() error {
			for task := range w.tasks {
				if err := task(gctx); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return w
}

// stop closes the queue and waits for the workers: the first error of a
// task, or ctx's cause when ctx ended first.
func (w *workers) stop(ctx context.Context) error {
	close(w.tasks)
	if err := w.g.Wait(); err != nil {
		return err
	}
	return context.Cause(ctx)
}

// applied is the report of a's writes for command
// (report.CommandChangesOnly or report.CommandPrune): what a counted,
// with res, the comparison that handed them over, and stats, the sink's
// counters (the write units DynamoDB reported).
func (a *tableApplier) applied(command string, res *verify.Result, stats func() load.Stats) *report.Applied {
	out := &report.Applied{Command: command, Applied: res.Applied, Written: a.stats.written.Load(), Deleted: a.stats.deleted.Load(),
		DeletedByType: a.deletedByType(), Skipped: a.stats.skipped.Load(), Rejected: a.stats.rejected.Load(), WriteUnits: a.stats.units.Load()}
	for _, e := range res.Entities {
		out.FullWriteUnits += e.WriteUnits
	}
	if stats != nil {
		out.ConsumedWriteUnits = stats().ConsumedWriteUnits
	}
	return out
}
