package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// Writes is the write stage of every writing command: it packs its Groups' rows
// into batches, a row's items in one batch so rows are written or rejected
// whole, and writes them to a load.Sink. Its writers serve every Group,
// preferring other Groups' work to a Behind Group's.
type Writes struct {
	sink          load.Sink
	keyAttrs      [2]string
	keyTypes      [2]string // WritesOptions.KeyTypes
	queue, behind chan groupBatch
	done          sync.WaitGroup
	// auto is an Autoscale Writes' gate, pace and meters (nil: fixed writers).
	// Close closes closing, releasing gated writers and ending auto's windows,
	// whose end closes driven.
	auto            *autoRun
	closing, driven chan struct{}
	written         atomic.Int64
}

type groupBatch struct {
	g *Group
	b batch
	// done holds, by index in b.items, the callback of the row that item ends.
	done []func(error)
	seq  int
	task func(context.Context) error
}

// queuedBatches lets derivation run ahead of the writes, within bounds.
const queuedBatches = 10_000 / load.MaxBatchItems

// BehindItems bounds the items Behind Groups queue without waiting.
const BehindItems = 40_000

// WritesOptions are how a Writes writes.
type WritesOptions struct {
	// Concurrency is the number of writers (default DefaultConcurrency);
	// ignored with Auto.
	Concurrency int
	// KeyTypes are the key attributes' types, for ItemKeyMap.
	KeyTypes [2]string
	// Auto, if set, has an Autoscaler choose and pace the writers.
	Auto *Autoscale
	// OnWriters, if set, is told the writers at the start and at each change,
	// from the Autoscaler's goroutine.
	OnWriters func(writers int)
	// Queue bounds the work waiting (default queuedBatches, at least a
	// writer's).
	Queue int
}

func (o WritesOptions) writers() int {
	switch {
	case o.Auto != nil:
		return o.Auto.withDefaults().Max
	case o.Concurrency <= 0:
		return DefaultConcurrency
	}
	return o.Concurrency
}

// NewWrites starts writers to sink, keyed by keyAttrs; Close stops them.
func NewWrites(sink load.Sink, keyAttrs [2]string, opts WritesOptions) *Writes {
	writers := opts.writers()
	w := &Writes{sink: sink, keyAttrs: keyAttrs, keyTypes: opts.KeyTypes, behind: make(chan groupBatch, BehindItems/load.MaxBatchItems),
		closing: make(chan struct{}), driven: make(chan struct{})}
	tell := opts.OnWriters
	if tell == nil {
		tell = func(int) {}
	}
	if opts.Auto != nil {
		w.auto = newAutoRun(*opts.Auto, sink)
		go func() {
			defer close(w.driven)
			w.auto.drive(w.closing, tell)
		}()
	} else {
		close(w.driven)
		tell(writers)
	}
	queue := opts.Queue
	if queue <= 0 {
		queue = queuedBatches
	}
	w.queue = make(chan groupBatch, max(queue, writers))
	for i := range writers {
		w.done.Add(1)
		go w.writer(i)
	}
	return w
}

func (w *Writes) writer(i int) {
	defer w.done.Done()
	queue, behind := w.queue, w.behind
	for {
		if w.auto != nil && !w.auto.gate.wait(i, w.closing) {
			return // the writers let through write what is left
		}
		gb, ok := next(&queue, &behind)
		if !ok {
			return
		}
		if w.auto == nil {
			gb.g.run(gb)
			continue
		}
		items := max(1, len(gb.b.items)) // a task is one item
		w.auto.begin(i)
		// The pace fails only when the Group stops or its deadline is too near.
		_ = w.auto.pace.WaitN(gb.g.ctx, items)
		gb.g.run(gb)
		w.auto.end(i, items)
	}
}

// next prefers queue; drained channels become nil, and ok is false once both
// are.
func next(queue, behind *chan groupBatch) (gb groupBatch, ok bool) {
	for *queue != nil || *behind != nil {
		select {
		case gb, ok = <-*queue:
			if ok {
				return gb, true
			}
			*queue = nil
			continue
		default:
		}
		select {
		case gb, ok = <-*queue:
			if ok {
				return gb, true
			}
			*queue = nil
		case gb, ok = <-*behind:
			if ok {
				return gb, true
			}
			*behind = nil
		}
	}
	return groupBatch{}, false
}

// Close stops the writers once all handed work is written. No Group may be used
// after it.
func (w *Writes) Close() {
	close(w.queue)
	close(w.behind)
	close(w.closing)
	w.done.Wait()
	<-w.driven
}

// Autoscale is the writers of an Autoscale Writes, after Close; nil if fixed.
func (w *Writes) Autoscale() *AutoscaleSummary {
	if w.auto == nil {
		return nil
	}
	s := w.auto.scale.Summary()
	return &s
}

// Written is the items put or deleted so far, as the sink acknowledged.
func (w *Writes) Written() int64 { return w.written.Load() }

// Group is one unit of writes, used from one goroutine at a time.
type Group struct {
	w        *Writes
	plans    []*transform.Plan
	ctx      context.Context
	cancel   context.CancelCauseFunc
	cur      batch
	curDone  []func(error)
	pending  sync.WaitGroup
	mu       sync.Mutex
	rejects  []Reject
	onReject func(Reject) error
	onBatch  func(BatchAck)
	onStop   func(error)
	onTake   func([]transform.Item) ([]bool, func())
	failed   atomic.Bool
	sent     int
	queue    chan groupBatch
}

// Group starts writes whose items' Entity indexes plans; they stop with ctx,
// Cancel or a failed write.
func (w *Writes) Group(ctx context.Context, plans []*transform.Plan) *Group {
	g := &Group{w: w, plans: plans, queue: w.queue}
	g.ctx, g.cancel = context.WithCancelCause(ctx)
	g.cur = freshBatch()
	return g
}

// Behind has this Group's work wait for other Groups', so a comparison gives
// way to a follow's windows. Called before the first Add or Do.
func (g *Group) Behind() { g.queue = g.w.behind }

func freshBatch() batch {
	return batch{items: make([]transform.Item, 0, load.MaxBatchItems), rowEnd: make([]bool, 0, load.MaxBatchItems)}
}

// Add hands one row's items (1 to load.MaxBatchItems, no two of one key) to the
// writers in one batch, so the row is written or rejected whole. It waits while
// the queue is full and returns the cause of the Group's stop. Items must not
// change until written.
func (g *Group) Add(row []transform.Item) error { return g.AddThen(row, nil) }

// AddThen is Add, and calls done from a writer, before Wait returns, once the
// sink answered for the row (nil, or the first refused item's error); not when
// it was not written.
func (g *Group) AddThen(row []transform.Item, done func(error)) error {
	if g.ctx.Err() != nil { // an atomic load, where Cause takes a lock: once a row
		return context.Cause(g.ctx)
	}
	if !g.cur.fits(len(row)) {
		if err := g.Flush(); err != nil {
			return err
		}
	}
	full := g.cur.add(row)
	if done != nil || g.curDone != nil {
		for len(g.curDone) < len(g.cur.items) {
			g.curDone = append(g.curDone, nil)
		}
		g.curDone[len(g.cur.items)-1] = done
	}
	if full {
		return g.Flush()
	}
	return nil
}

// OnTake has take told of each batch of g's as a writer takes it, before it is
// written: take returns which of its items to leave out (nil: none) and a func
// called once the rest are written or failed. A row whose items are all left
// out is neither written nor rejected, and its callback is told nil. Called
// before the first Add; for Groups whose OnBatch is nil.
func (g *Group) OnTake(take func(items []transform.Item) (leaveOut []bool, written func())) {
	g.onTake = take
}

// BatchAck is what OnBatch is told of a batch the sink wrote.
type BatchAck struct {
	// Seq numbers the Group's batches from 0 in the order handed.
	Seq int
	// Written and Rejected are rows; Items, the items written.
	Written, Rejected, Items int64
	// Last is the batch's last item.
	Last transform.Item
}

// OnBatch has f told of each batch written, after its rejects and callbacks; f
// must be safe for concurrent use. Called before the first Add.
func (g *Group) OnBatch(f func(BatchAck)) { g.onBatch = f }

// OnStop has f told of the error that stops the Group (not ctx's or Cancel), so
// one failing unit can stop others. Called before the first Add.
func (g *Group) OnStop(f func(error)) { g.onStop = f }

// StreamRejects sends rejects to f (safe for concurrent use) instead of Wait;
// an error of f stops the Group. Called before the first Add.
func (g *Group) StreamRejects(f func(Reject) error) { g.onReject = f }

// Do hands task to a writer, so unbatched writes (conditional deletes) share
// the writers; task's ctx is done once the Group stops, and its error stops
// the Group. Unordered with the rows, it is not counted in Written. Do waits
// and returns as Add.
func (g *Group) Do(task func(ctx context.Context) error) error {
	if g.ctx.Err() != nil {
		return context.Cause(g.ctx)
	}
	return g.send(groupBatch{g: g, task: task})
}

// Pending is the batch being filled; valid until the next Add or Flush, not
// to be changed.
func (g *Group) Pending() []transform.Item { return g.cur.items }

// Batches is the number of batches handed to the writers so far.
func (g *Group) Batches() int { return g.sent }

// Flush hands the batch being filled to the writers, without waiting for the
// write; it waits and returns as Add.
func (g *Group) Flush() error {
	if len(g.cur.items) == 0 {
		return nil
	}
	if err := g.send(groupBatch{g: g, b: g.cur, done: g.curDone, seq: g.sent}); err != nil {
		return err
	}
	g.sent++
	g.cur, g.curDone = freshBatch(), nil
	return nil
}

func (g *Group) send(gb groupBatch) error {
	g.pending.Add(1)
	select {
	case g.queue <- gb:
		return nil
	case <-g.ctx.Done():
		g.pending.Done()
		return context.Cause(g.ctx)
	}
}

// Cancel stops the Group's writes at their next batch or task.
func (g *Group) Cancel() { g.cancel(context.Canceled) }

// fail stops the Group and tells OnStop once, unless it had stopped.
func (g *Group) fail(err error) {
	if g.ctx.Err() != nil || !g.failed.CompareAndSwap(false, true) {
		return
	}
	g.cancel(err)
	if g.onStop != nil {
		g.onStop(err)
	}
}

// Wait flushes and waits for every batch. It returns the refused rows in the
// order their batches were written (none with StreamRejects) and the first
// error of a write (a refused delete is one) or the stop.
func (g *Group) Wait() ([]Reject, error) {
	err := g.Flush()
	g.pending.Wait()
	defer g.cancel(nil)
	if cause := context.Cause(g.ctx); cause != nil {
		err = cause
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.rejects, err
}

func (g *Group) run(gb groupBatch) {
	defer g.pending.Done()
	if g.ctx.Err() != nil {
		return
	}
	if gb.task != nil {
		if err := gb.task(g.ctx); err != nil {
			g.fail(err)
		}
		return
	}
	if g.onTake != nil {
		leave, written := g.onTake(gb.b.items)
		defer written()
		if gb = gb.without(leave); len(gb.b.items) == 0 {
			return
		}
	}
	g.write(gb)
}

// without is gb less the items leave marks; a row left without items has its
// callback called with nil.
func (gb groupBatch) without(leave []bool) groupBatch {
	if !slices.Contains(leave, true) {
		return gb
	}
	out := groupBatch{g: gb.g, seq: gb.seq}
	kept := false // of the current row
	for i, it := range gb.b.items {
		if !leave[i] {
			out.b.items, out.b.rowEnd = append(out.b.items, it), append(out.b.rowEnd, false)
			out.done = append(out.done, nil)
			kept = true
		}
		if !gb.b.rowEnd[i] {
			continue
		}
		var done func(error)
		if gb.done != nil {
			done = gb.done[i]
		}
		switch {
		case kept:
			out.b.rowEnd[len(out.b.rowEnd)-1], out.done[len(out.done)-1] = true, done
		case done != nil:
			done(nil)
		}
		kept = false
	}
	return out
}

func (g *Group) write(gb groupBatch) {
	b := gb.b
	failed, err := writeBatch(g.ctx, g.w.sink, b.items)
	if err != nil {
		g.fail(err)
		return
	}
	for i := range failed {
		if it := b.items[i]; it.Delete {
			g.fail(fmt.Errorf("delete %v: %w", transform.ItemKey(it.Attrs, g.w.keyAttrs), failed[i]))
			return
		}
	}
	written, rejected, items := settleRows(b, failed, gb.done, g.plans, g.w.keyAttrs, g.w.keyTypes, func(r Reject) {
		if g.onReject != nil {
			if err := g.onReject(r); err != nil {
				g.fail(err)
			}
			return
		}
		g.mu.Lock()
		g.rejects = append(g.rejects, r)
		g.mu.Unlock()
	})
	g.w.written.Add(items)
	if g.onBatch != nil {
		g.onBatch(BatchAck{Seq: gb.seq, Written: written, Rejected: rejected, Items: items, Last: b.items[len(b.items)-1]})
	}
}

// writeBatch returns the sink's refused items by index, or the stopping error.
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

// settleRows rejects each row with a refused item and calls its callback; it
// returns rows written and rejected, and items written.
func settleRows(b batch, failed map[int]error, done []func(error), plans []*transform.Plan, keyAttrs, keyTypes [2]string, reject func(Reject)) (written, rejected, items int64) {
	var rowErr error
	var rowKey map[string]string
	for idx, it := range b.items {
		if ferr, bad := failed[idx]; !bad {
			items++
		} else if rowErr == nil {
			rowErr, rowKey = ferr, ItemKeyMap(transform.ItemKey(it.Attrs, keyAttrs), keyAttrs, keyTypes)
		}
		if !b.rowEnd[idx] {
			continue
		}
		if rowErr == nil {
			written++
		} else {
			p := plans[it.Entity]
			rejected++
			var sourceKey map[string]any
			if it.Row != nil { // nil: an item that was never a source row's (Group.Add)
				sourceKey = p.SourceKey(it.Row)
			}
			reject(Reject{Entity: p.Entity().Name, SourceKey: sourceKey, ItemKey: rowKey, Reason: rowErr.Error()})
		}
		if done != nil && done[idx] != nil {
			done[idx](rowErr)
		}
		rowErr = nil
	}
	return written, rejected, items
}
