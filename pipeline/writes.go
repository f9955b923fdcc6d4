package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// Writes is the write stage of the writes that follow a full load: a
// follow's windows of changes (package follow) hand it rows, and it packs
// them into batches and writes them with the same pieces as Run's writers
// (a row's items travel in one batch, whole rows are written or rejected,
// a reject has the shape of Run's). Concurrency goroutines write the
// batches of every Group, so that the writes of two windows in flight at
// once share them. The sink's own limits (load.DynamoDB's write-unit cap,
// retries and throttle counting) apply as they do to Run.
type Writes struct {
	sink     load.Sink
	keyAttrs [2]string
	queue    chan groupBatch
	done     sync.WaitGroup
	// written counts the items every Group wrote (put or deleted).
	written atomic.Int64
}

// groupBatch is one batch of a Group.
type groupBatch struct {
	g *Group
	b batch
}

// queuedBatches bounds the batches queued for the writers: 400 batches,
// 10,000 items, so that a window's derivation runs ahead of its writes
// (the server stays busy while the next window is received and read)
// without holding every item of a large window.
const queuedBatches = 10_000 / load.MaxBatchItems

// NewWrites starts concurrency (at least 1) writers of batches to sink, a
// table whose partition and sort key attributes are keyAttrs (sort key ""
// when the table has none). Close stops them.
func NewWrites(sink load.Sink, keyAttrs [2]string, concurrency int) *Writes {
	w := &Writes{sink: sink, keyAttrs: keyAttrs, queue: make(chan groupBatch, max(queuedBatches, concurrency))}
	for range max(concurrency, 1) {
		w.done.Add(1)
		go func() {
			defer w.done.Done()
			for gb := range w.queue {
				gb.g.write(gb.b)
			}
		}()
	}
	return w
}

// Close stops the writers once every batch handed to them is written. No
// Group may be used after it.
func (w *Writes) Close() {
	close(w.queue)
	w.done.Wait()
}

// Written is the number of items written (put or deleted) so far by every
// Group, acknowledged by the sink.
func (w *Writes) Written() int64 { return w.written.Load() }

// Group is one unit of writes (a follow's window): the rows Add hands to
// the writers, whose end Wait waits for. Add and Wait are called from one
// goroutine.
type Group struct {
	w *Writes
	// plans name the rows of rejects: an item's Entity indexes them.
	plans  []*transform.Plan
	ctx    context.Context
	cancel context.CancelCauseFunc
	cur    batch
	// pending counts the batches handed to the writers and not yet
	// written.
	pending sync.WaitGroup
	mu      sync.Mutex
	rejects []Reject
}

// Group starts a unit of writes whose items' Entity indexes plans. Its
// writes stop when ctx is done, when Cancel is called or when a write
// fails.
func (w *Writes) Group(ctx context.Context, plans []*transform.Plan) *Group {
	g := &Group{w: w, plans: plans}
	g.ctx, g.cancel = context.WithCancelCause(ctx)
	g.cur = freshBatch()
	return g
}

func freshBatch() batch {
	return batch{items: make([]transform.Item, 0, load.MaxBatchItems), rowEnd: make([]bool, 0, load.MaxBatchItems)}
}

// Add hands one row's items (1 to load.MaxBatchItems, no two of one key)
// to the writers, in one batch: the row is written or rejected whole. A
// delete (transform.Item.Delete) is a row of its own. Add waits while the
// writers' queue is full; it returns the cause of the Group's stop once
// it has stopped.
func (g *Group) Add(row []transform.Item) error {
	if err := context.Cause(g.ctx); err != nil {
		return err
	}
	if !g.cur.fits(len(row)) {
		if err := g.flush(); err != nil {
			return err
		}
	}
	if g.cur.add(row) {
		return g.flush()
	}
	return nil
}

// flush hands the batch being filled to the writers.
func (g *Group) flush() error {
	if len(g.cur.items) == 0 {
		return nil
	}
	g.pending.Add(1)
	select {
	case g.w.queue <- groupBatch{g: g, b: g.cur}:
	case <-g.ctx.Done():
		g.pending.Done()
		return context.Cause(g.ctx)
	}
	g.cur = freshBatch()
	return nil
}

// Cancel stops the Group's writes at their next batch; Wait still waits
// for those being written.
func (g *Group) Cancel() { g.cancel(context.Canceled) }

// Wait hands over the batch being filled and waits until every batch of
// the Group is written. It returns the rows the sink refused, as Run's
// rejects (in the order their batches were written), and the first error:
// of a write (a refused delete is one), or the cause of a stop.
func (g *Group) Wait() ([]Reject, error) {
	err := g.flush()
	g.pending.Wait()
	defer g.cancel(nil)
	if cause := context.Cause(g.ctx); cause != nil {
		err = cause
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.rejects, err
}

// write writes one batch of the Group, unless the Group has stopped.
func (g *Group) write(b batch) {
	defer g.pending.Done()
	if g.ctx.Err() != nil {
		return
	}
	failed, err := writeBatch(g.ctx, g.w.sink, b.items)
	if err != nil {
		g.cancel(err)
		return
	}
	for i := range failed {
		if it := b.items[i]; it.Delete {
			g.cancel(fmt.Errorf("delete %v: %w", transform.ItemKey(it.Attrs, g.w.keyAttrs), failed[i]))
			return
		}
	}
	_, _, items := settleRows(b, failed, g.plans, g.w.keyAttrs, func(r Reject) {
		g.mu.Lock()
		g.rejects = append(g.rejects, r)
		g.mu.Unlock()
	})
	g.w.written.Add(items)
}

// writeBatch writes items with sink: it returns the items the sink
// refused, by index in items (a *load.BatchError; nil when every item was
// written), or the error that stops the writes.
func writeBatch(ctx context.Context, sink load.Sink, items []transform.Item) (map[int]error, error) {
	err := sink.Write(ctx, items)
	var be *load.BatchError
	switch {
	case err == nil:
		return nil, nil
	case errors.As(err, &be):
		failed := make(map[int]error, len(be.Failed))
		for _, f := range be.Failed {
			failed[f.Index] = f.Err
		}
		return failed, nil
	default:
		return nil, err
	}
}

// settleRows counts b's rows written and passes to reject each row with
// an item in failed (by index in the batch), naming the row, the first
// failed item's key and its error. It returns the rows written and
// rejected, and the items written.
func settleRows(b batch, failed map[int]error, plans []*transform.Plan, keyAttrs [2]string, reject func(Reject)) (written, rejected, items int64) {
	var rowErr error
	var rowKey map[string]string
	for idx, it := range b.items {
		if ferr, bad := failed[idx]; !bad {
			items++
		} else if rowErr == nil {
			rowErr, rowKey = ferr, ItemKeyMap(transform.ItemKey(it.Attrs, keyAttrs), keyAttrs)
		}
		if !b.rowEnd[idx] {
			continue
		}
		if rowErr == nil {
			written++
			continue
		}
		p := plans[it.Entity]
		rejected++
		reject(Reject{Entity: p.Entity().Name, SourceKey: p.SourceKey(it.Row), ItemKey: rowKey, Reason: rowErr.Error()})
		rowErr = nil
	}
	return written, rejected, items
}
