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

// Writes is the write stage of every writing command: Run (the full load
// and export, a Group per part it reads), a follow's windows of changes
// (package follow), and the puts and conditional deletes of migrate
// --changes-only and --prune (package engine) hand it rows, and it packs
// them into batches (a row's items travel in one batch, whole rows are
// written or rejected) and writes them to a load.Sink (a DynamoDB table,
// export's files, a test's sink). Its writers (WritesOptions: a fixed
// number, or as many as an Autoscaler decides, at its pace) write the
// batches, and run the tasks (Group.Do), of every Group, so that the
// writes of two windows in flight at once share them. The sink's own
// limits (load.DynamoDB's write-unit cap, retries and throttle counting)
// apply.
//
// The writers prefer the work of other Groups to that of a Group started
// with Behind (a comparison's writes beside a follow): a follow's window
// queued after a comparison's batches is written next, not after them
// (each writer may take one Behind batch that arrived with it).
type Writes struct {
	sink     load.Sink
	keyAttrs [2]string
	keyTypes [2]string // WritesOptions.KeyTypes
	// queue holds the work of the Groups (WritesOptions.Queue), behind
	// that of the Groups started with Behind (up to BehindItems).
	queue, behind chan groupBatch
	done          sync.WaitGroup
	// auto is an Autoscale Writes' gate, pace and meters (nil for a fixed
	// number of writers); closing, closed by Close, lets the writers the
	// gate holds end and stops auto's windows, whose end driven tells.
	auto            *autoRun
	closing, driven chan struct{}
	// written counts the items every Group wrote (put or deleted).
	written atomic.Int64
}

// groupBatch is one unit of a Group's work for the writers: a batch, or a
// task (Group.Do).
type groupBatch struct {
	g *Group
	b batch
	// done holds, by index in b.items, the callback of the row that item
	// ends (Group.AddThen); nil when no row of b has one.
	done []func(error)
	// seq is b's number in the Group's batches (BatchAck.Seq).
	seq  int
	task func(context.Context) error
}

// queuedBatches bounds the batches queued for the writers: 400 batches,
// 10,000 items, so that a window's derivation runs ahead of its writes
// (the server stays busy while the next window is received and read)
// without holding every item of a large window.
const queuedBatches = 10_000 / load.MaxBatchItems

// BehindItems bounds the items queued for the writers by the Groups
// started with Behind (1,600 batches): work held in memory whole (the
// chunks of a comparison beside a follow) is handed without waiting while
// the items handed and not yet written stay under it.
const BehindItems = 40_000

// WritesOptions are how a Writes writes.
type WritesOptions struct {
	// Concurrency is the number of writers (default DefaultConcurrency);
	// ignored with Auto.
	Concurrency int
	// KeyTypes are the types of the key attributes (mapping.Table.KeyTypes;
	// "" is S), which rejects name their items by (ItemKeyMap).
	KeyTypes [2]string
	// Auto, if not nil, has the writes choose their number of writers as
	// they go, and pace them (an Autoscaler, told what the writers did
	// each window: items written, batches and tasks ended, time busy, the
	// sink's throttles when it is a load.ThrottleCounter). A task
	// (Group.Do) counts as a batch of one item. Windows in which the
	// writers waited for work (between a follow's windows) add no writers.
	Auto *Autoscale
	// OnWriters, if set, is told the number of writers at the start and,
	// with Auto, at each change, from the Autoscaler's goroutine.
	OnWriters func(writers int)
	// Queue bounds the batches and tasks of the Groups waiting for the
	// writers, never below one a writer (Concurrency, or Auto's Max):
	// default queuedBatches. Run, whose rows may be large and whose
	// readers need not run ahead, asks for one a writer.
	Queue int
}

// writers is the number of writer goroutines: Concurrency (default
// DefaultConcurrency), or Auto's Max.
func (o WritesOptions) writers() int {
	switch {
	case o.Auto != nil:
		return o.Auto.withDefaults().Max
	case o.Concurrency <= 0:
		return DefaultConcurrency
	}
	return o.Concurrency
}

// NewWrites starts the writers (opts) of batches to sink, whose items'
// partition and sort key attributes are keyAttrs (sort key "" when there
// is none; rejects name items by them). Close stops them.
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

// writer is writer i's loop: it runs the work of the Groups, queue's
// first (next), while the gate of an Autoscale Writes lets it, until
// Close.
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
		// An error of the pace is the Group's ctx done (run skips the
		// work) or its deadline before the pace allows the work, which
		// is then done at once.
		_ = w.auto.pace.WaitN(gb.g.ctx, items)
		gb.g.run(gb)
		w.auto.end(i, items)
	}
}

// next is the next unit of work for a writer: queue's first, or, while
// queue holds none, whichever of queue and behind has one first. A
// channel found closed and drained is set to nil; ok is false once both
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

// Close stops the writers once every batch handed to them is written. No
// Group may be used after it.
func (w *Writes) Close() {
	close(w.queue)
	close(w.behind)
	close(w.closing)
	w.done.Wait()
	<-w.driven
}

// Autoscale is an Autoscale Writes' writers so far (nil for a fixed
// number). Called after Close.
func (w *Writes) Autoscale() *AutoscaleSummary {
	if w.auto == nil {
		return nil
	}
	s := w.auto.scale.Summary()
	return &s
}

// Written is the number of items written (put or deleted) so far by every
// Group, acknowledged by the sink.
func (w *Writes) Written() int64 { return w.written.Load() }

// Group is one unit of writes (a part of Run's, a follow's window, the
// writes of a comparison between two of its Waits): the rows Add hands to
// the writers and the tasks Do hands them, whose end Wait waits for. Add,
// AddThen, Do, Flush, Pending and Wait are called from one goroutine (one
// at a time: Run's readers hand a Group's Wait to another).
type Group struct {
	w *Writes
	// plans name the rows of rejects: an item's Entity indexes them.
	plans  []*transform.Plan
	ctx    context.Context
	cancel context.CancelCauseFunc
	cur    batch
	// curDone is groupBatch.done of cur (nil while no row of cur has a
	// callback).
	curDone []func(error)
	// pending counts the batches and tasks handed to the writers and not
	// yet done.
	pending sync.WaitGroup
	mu      sync.Mutex
	rejects []Reject
	// onReject, when set, is given the rejects instead of Wait
	// (StreamRejects).
	onReject func(Reject) error
	// onBatch and onStop, when set, are OnBatch's and OnStop's.
	onBatch func(BatchAck)
	onStop  func(error)
	// failed is set by the first fail, which alone tells onStop.
	failed atomic.Bool
	// sent counts the batches handed to the writers.
	sent int
	// queue is the Writes' queue the Group's work goes to: Writes.queue,
	// or Writes.behind (Behind).
	queue chan groupBatch
}

// Group starts a unit of writes whose items' Entity indexes plans. Its
// writes stop when ctx is done, when Cancel is called or when a write
// fails.
func (w *Writes) Group(ctx context.Context, plans []*transform.Plan) *Group {
	g := &Group{w: w, plans: plans, queue: w.queue}
	g.ctx, g.cancel = context.WithCancelCause(ctx)
	g.cur = freshBatch()
	return g
}

// Behind has the writers prefer the batches and tasks of the Groups
// without Behind to this Group's: a writer takes this Group's work when it
// finds none of theirs waiting (when both arrive while it waits, either
// may come first). The Group's work gives way to theirs (a comparison's writes beside a follow give way to its
// windows'). Its work still starts in the order it was handed, and a
// batch being written is not interrupted. Called before the first Add or
// Do.
func (g *Group) Behind() { g.queue = g.w.behind }

func freshBatch() batch {
	return batch{items: make([]transform.Item, 0, load.MaxBatchItems), rowEnd: make([]bool, 0, load.MaxBatchItems)}
}

// Add hands one row's items (1 to load.MaxBatchItems, no two of one key)
// to the writers, in one batch: the row is written or rejected whole. A
// delete (transform.Item.Delete) is a row of its own. A row whose items
// carry no source row (transform.Item.Row nil, as a put of an item that
// was never a row's) is rejected with a nil SourceKey. Add waits while the
// writers' queue is full; it returns the cause of the Group's stop once
// it has stopped. The slice row is not kept, but its items' Attrs and Row
// are, until their batch is written: they must not change.
func (g *Group) Add(row []transform.Item) error { return g.AddThen(row, nil) }

// AddThen is Add, and calls done (when not nil) once the sink has
// answered for the row's batch: with nil when it wrote every item of the
// row, or with the error of the first item it refused (the row is then
// also one of Wait's rejects). done is called from a writer goroutine,
// before Wait returns, and not at all when the batch was not written (the
// Group had stopped, or the write failed) or held a refused delete.
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
		// Align the callbacks with the items: the row's is at its last.
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

// BatchAck is what OnBatch is told of one batch of a Group once the sink
// wrote it (whole, or but for the rows it refused).
type BatchAck struct {
	// Seq is the batch's number in the Group, from 0, in the order the
	// batches were handed to the writers (Batches counts them).
	Seq int
	// Written and Rejected are the batch's rows the sink wrote and
	// refused; Items the items it wrote.
	Written, Rejected, Items int64
	// Last is the batch's last item (its Row is the batch's last row).
	Last transform.Item
}

// OnBatch has f told of each batch of the Group the sink wrote, from the
// writer's goroutine, after the batch's rejects went to StreamRejects' f
// and its rows' AddThen callbacks were called; not of a batch that was not
// written (the Group had stopped, or the write failed). f must be safe for
// concurrent use: batches are written in parallel, in no set order.
// Called before the first Add.
func (g *Group) OnBatch(f func(BatchAck)) { g.onBatch = f }

// OnStop has f told of the error of a write, a task or StreamRejects' f
// that stops the Group (not of its ctx's end, nor of Cancel), from the
// writer's goroutine: so that one unit of writes that fails stops others
// (Run's parts). Called before the first Add or Do.
func (g *Group) OnStop(f func(error)) { g.onStop = f }

// StreamRejects has the Group's rejects go to f as their batches are
// written, from the writers' goroutines (f must be safe for concurrent
// use), instead of being held for Wait: for a Group with no bound on its
// rows, such as a comparison's writes. An error of f stops the Group.
// Called before the first Add.
func (g *Group) StreamRejects(f func(Reject) error) { g.onReject = f }

// Do hands task to the writers: one of them runs it, between batches, as
// it writes the batches of every Group, so that a write the sink does not
// batch (a conditional delete) shares the pool and its concurrency. ctx is
// the Group's: done once the Group stops. An error of task stops the Group
// as a failed write does (Wait returns the first). The batch being filled
// stays where it is: Do does not order task after the rows added before.
// It waits while the writers' queue is full, and returns the cause of the
// Group's stop once it has stopped. A task is not counted in
// Writes.Written: it counts what it does itself.
func (g *Group) Do(task func(ctx context.Context) error) error {
	if g.ctx.Err() != nil {
		return context.Cause(g.ctx)
	}
	return g.send(groupBatch{g: g, task: task})
}

// Pending is the items of the batch being filled, the rows added since
// the last batch was handed to the writers (a batch is handed once
// full, or by Flush or Wait, or when the next row does not fit:
// load.MaxBatchItems items). Valid until the next Add or Flush; not to be
// changed.
func (g *Group) Pending() []transform.Item { return g.cur.items }

// Batches is the number of batches handed to the writers so far.
func (g *Group) Batches() int { return g.sent }

// Flush hands the batch being filled, if it holds a row, to the writers,
// without waiting for it to be written. It waits while the writers' queue
// is full, and returns the cause of the Group's stop once it has stopped.
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

// send queues gb for the writers, waiting while the queue is full; it
// returns the cause of the Group's stop if it stops first.
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

// Cancel stops the Group's writes at their next batch or task; Wait still
// waits for those under way.
func (g *Group) Cancel() { g.cancel(context.Canceled) }

// fail stops the Group with err, the error of its work, and tells OnStop's
// f once, unless the Group had stopped (err is then likely of that stop).
func (g *Group) fail(err error) {
	if g.ctx.Err() != nil || !g.failed.CompareAndSwap(false, true) {
		return
	}
	g.cancel(err)
	if g.onStop != nil {
		g.onStop(err)
	}
}

// Wait hands over the batch being filled and waits until every batch of
// the Group is written. It returns the rows the sink refused, as Run's
// rejects (in the order their batches were written; none with
// StreamRejects), and the first error:
// of a write (a refused delete is one), or the cause of a stop.
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

// run does one unit of the Group's work, unless the Group has stopped.
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
	g.write(gb)
}

// write writes one batch of the Group and settles its rows: rejects, done
// (groupBatch.done) told of each row, and OnBatch's f of the batch.
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
// failed item's key and its error; then it calls the row's callback, if
// done (by index of the row's last item; nil for none) holds one, with
// that error or nil. It returns the rows written and rejected, and the
// items written.
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
