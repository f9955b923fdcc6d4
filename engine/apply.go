package engine

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/metrics"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// tableApplier is the verify.Applier of migrate with ChangesOnly and Prune. It
// writes through pipeline.Writes on the run's DynamoDB sink: each put is a row
// of its own (Row nil, so its reject names no source row), and each delete of a
// stale item, conditional on its type, a task on the same writers. The writes
// between two Waits are one Group. Items DynamoDB refuses are rejects, streamed
// to reject; any other error stops the comparison.
type tableApplier struct {
	ds       *load.DynamoDB
	typeAttr string
	keyAttrs [2]string
	keyTypes [2]string
	plans    []*transform.Plan
	// entities indexes plans by entity name (verify.Write.Entity).
	entities map[string]int
	reject   func(pipeline.Reject) error
	// guard, when set, is the types the comparison reads: a missing item is put
	// only if no item of another type holds its key (putGuarded).
	guard []string

	writes  *pipeline.Writes
	g       *pipeline.Group // the writes since the last Wait; nil between Waits
	stats   applyStats
	metrics *metrics.Run
	// log, when set, is told an autoscaled applier's writers at close.
	log  io.Writer
	what string
	// refused holds the key texts of the puts rejected (refuse).
	refused sync.Map
}

var (
	_ verify.Applier  = (*tableApplier)(nil)
	_ verify.Refusals = (*tableApplier)(nil)
)

// applyStats count writes acknowledged; safe for concurrent use.
type applyStats struct {
	written, deleted, skipped, rejected, units atomic.Int64
	mu                                         sync.Mutex
	byType                                     map[string]int64 // deleted, by item type
}

// newTableApplier returns an applier writing with ds the items of plans'
// entities; reject, if set, gets refused items. close stops it. A Put waits
// while one batch a writer is queued, so at most two batches a writer of
// decoded items are held however far the comparison runs ahead.
func newTableApplier(ds *load.DynamoDB, typeAttr string, keyAttrs, keyTypes [2]string, plans []*transform.Plan, writers pipeline.WritesOptions, reject func(pipeline.Reject) error) *tableApplier {
	entities := make(map[string]int, len(plans))
	for i, p := range plans {
		if p != nil {
			entities[p.Entity().Name] = i
		}
	}
	writers.KeyTypes, writers.Queue = keyTypes, 1
	return &tableApplier{ds: ds, typeAttr: typeAttr, keyAttrs: keyAttrs, keyTypes: keyTypes, plans: plans, entities: entities, reject: reject,
		writes: pipeline.NewWrites(ds, keyAttrs, writers)}
}

// Put hands w's item to the writers and counts it once acknowledged; with
// guard, a missing item is a conditional put of its own (putGuarded).
func (a *tableApplier) Put(ctx context.Context, w verify.Write) error {
	e, ok := a.entities[w.Entity]
	if !ok {
		return fmt.Errorf("put %s: entity %q is not the comparison's", w.PK, w.Entity)
	}
	if w.Missing && len(a.guard) > 0 {
		return a.handed(ctx, a.group(ctx).Do(func(ctx context.Context) error { return a.putGuarded(ctx, w) }))
	}
	units := w.WriteUnits
	row := []transform.Item{{Entity: e, Attrs: w.Item}}
	return a.handed(ctx, a.group(ctx).AddThen(row, func(err error) {
		if err != nil {
			a.refuse(w)
			return
		}
		a.stats.written.Add(1)
		a.stats.units.Add(units)
		a.metrics.Written(w.Entity, 1)
	}))
}

// Delete hands the conditional delete of w's item to the writers.
func (a *tableApplier) Delete(ctx context.Context, w verify.Write) error {
	return a.handed(ctx, a.group(ctx).Do(func(ctx context.Context) error { return a.delete(ctx, w) }))
}

// Wait waits for every write handed since the last Wait and returns the first
// error.
func (a *tableApplier) Wait(ctx context.Context) error {
	if a.g == nil {
		return nil
	}
	g := a.g
	a.g = nil
	_, err := g.Wait() // the rejects went to a.reject (group)
	return cmp.Or(err, context.Cause(ctx))
}

// abandon cancels the writes since the last Wait and waits for those under way,
// so the applier can be closed.
func (a *tableApplier) abandon(ctx context.Context) {
	if a.g != nil {
		a.g.Cancel()
	}
	_ = a.Wait(ctx)
}

// close stops the writers once the writes handed to them are done.
func (a *tableApplier) close() {
	a.writes.Close()
	if as := a.writes.Autoscale(); as != nil && a.log != nil {
		logAutoscale(a.log, a.what, as)
	}
}

// logAutoscale prints the writers an Autoscale Writes used, its line
// beginning with what ("prune", "follow").
func logAutoscale(w io.Writer, what string, as *pipeline.AutoscaleSummary) {
	fmt.Fprintf(w, "%s: writers %s (auto): %s on throttling\n", what, as.Writers(), report.Count(as.Halvings, "halving", "halvings"))
}

// group is the Group of the writes since the last Wait.
func (a *tableApplier) group(ctx context.Context) *pipeline.Group {
	if a.g == nil {
		a.g = a.writes.Group(ctx, a.plans)
		if a.reject != nil {
			// A comparison's writes are unbounded: rejects go to the file as
			// they come.
			a.g.StreamRejects(a.reject)
		}
	}
	return a.g
}

// handed passes on the error of a stopped Group, after Wait.
func (a *tableApplier) handed(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	return cmp.Or(a.Wait(ctx), err)
}

// delete deletes w's item if its type attribute still holds w.Type.
func (a *tableApplier) delete(ctx context.Context, w verify.Write) error {
	key := transform.KeyMap(a.keyAttrs, a.keyTypes, [2]string{w.PK, w.SK})
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
	a.metrics.Deleted(w.Entity, 1)
	a.stats.mu.Lock()
	defer a.stats.mu.Unlock()
	if a.stats.byType == nil {
		a.stats.byType = map[string]int64{}
	}
	a.stats.byType[w.Type]++
	return nil
}

// putGuarded puts a missing item unless an item of another type holds its key
// (load.DynamoDB.PutIfTypes): the comparison did not see that other entity's
// item, and a full migrate would reject the second as a duplicate. A kept item
// makes the put a reject. BatchWriteItem takes no condition, hence one request
// an item, at the same write units.
func (a *tableApplier) putGuarded(ctx context.Context, w verify.Write) error {
	put, holder, err := a.ds.PutIfTypes(ctx, w.Item, a.typeAttr, a.guard)
	switch {
	case err != nil:
		return err
	case put:
		a.stats.written.Add(1)
		a.stats.units.Add(w.WriteUnits)
		a.metrics.Written(w.Entity, 1)
		return nil
	}
	// Not refused: the new version's check fails on it (docs/follow.md).
	a.stats.rejected.Add(1)
	if a.reject == nil {
		return nil
	}
	return a.reject(collisionReject(w, a.keyAttrs, a.keyTypes, holder))
}

// refuse counts w's put, which the table refused, as rejected, for Refused.
func (a *tableApplier) refuse(w verify.Write) {
	a.stats.rejected.Add(1)
	a.refused.Store([2]string{w.PK, w.SK}, true)
}

// Refused reports whether the table refused the put of key texts pk and sk
// (verify.Refusals).
func (a *tableApplier) Refused(pk, sk string) bool {
	_, ok := a.refused.Load([2]string{pk, sk})
	return ok
}

// collisionReject is the reject of w, whose key an item of type holder ("":
// unknown) holds, worded as migrate's duplicate check does.
func collisionReject(w verify.Write, keyAttrs, keyTypes [2]string, holder string) pipeline.Reject {
	who := "an item of a type the comparison does not read"
	if holder != "" {
		who = "an item of type " + holder
	}
	return pipeline.Reject{Entity: w.Entity, ItemKey: pipeline.ItemKeyMap([2]string{w.PK, w.SK}, keyAttrs, keyTypes),
		Reason: fmt.Sprintf("duplicate primary key (%s): %s, another entity's, holds it and was not overwritten", transform.DescribeKey(keyAttrs, [2]string{w.PK, w.SK}), who)}
}

func (a *tableApplier) deletedByType() map[string]int64 {
	a.stats.mu.Lock()
	defer a.stats.mu.Unlock()
	return maps.Clone(a.stats.byType)
}

// applied is the report of a's writes for command, with res the comparison and
// stats the sink's counters.
func (a *tableApplier) applied(command string, res *outcome.Result, stats func() load.Stats) *report.Applied {
	out := &report.Applied{Command: command, Applied: res.Applied, Written: a.stats.written.Load(), Deleted: a.stats.deleted.Load(),
		DeletedByType: a.deletedByType(), Skipped: a.stats.skipped.Load(), Rejected: a.stats.rejected.Load(), WriteUnits: a.stats.units.Load(),
		FullWriteUnits: res.WriteUnits()}
	if stats != nil {
		out.ConsumedWriteUnits = stats().ConsumedWriteUnits
	}
	return out
}
