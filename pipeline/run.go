package pipeline

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// Run migrates the entities of plans from src into sink. Readers (src and its
// forks, on one snapshot) read parts handed out in mapping order; an ordered
// entity of 2×MinRangeRows rows or more is split into ranges.
//
// No two items of the run share a primary key unless opts.SkipDuplicateCheck
// (batches are always checked). Entities not proven unique form collision
// groups, each read by one reader in mapping and primary-key order while
// claiming keys, so the earlier row keeps a key in every run, whatever the
// readers; a resumed group first replays what was written.
//
// Rejects go to opts.OnReject. Run returns the summary and the first fatal
// error; rows read before a stop are still written, so the summary describes
// the table.
func Run(ctx context.Context, src RowSource, m *mapping.Mapping, plans []*transform.Plan, sink load.Sink, opts Options) (*Summary, error) {
	started := time.Now()
	opts = opts.withDefaults()
	totals, err := countRows(ctx, src, plans)
	if err != nil {
		return nil, err
	}
	groups, groupOf := [][]int(nil), ungrouped(len(plans))
	if !opts.SkipDuplicateCheck {
		groups, groupOf = collisionGroups(plans, opts.keysUnique(m, plans))
	}
	if opts.Checkpoint != nil {
		opts.Checkpoint.track(plans)
	}
	res, err := trustedResume(ctx, src, plans, opts.Checkpoint.resumeOf(plans))
	if err != nil {
		return nil, err
	}
	parts, byEntity, tasks, err := schedule(ctx, src, plans, totals, res, opts.Readers, opts.MinRangeRows, opts.Shard, groups, groupOf)
	if err != nil {
		return nil, err
	}
	if opts.Progress != nil {
		opts.Progress.Plan(planned(plans, totals, res.skip))
	}
	srcs, closeForks, err := forkReaders(ctx, src, min(opts.Readers, len(tasks)))
	if err != nil {
		return nil, err
	}
	defer closeForks()
	// One batch a writer: readers keep no more ahead (rows may be large).
	wo := WritesOptions{Concurrency: opts.Concurrency, Auto: opts.Auto, Queue: 1, KeyTypes: m.Table.KeyTypes()}
	r := &run{plans: plans, keyAttrs: m.Table.Keys(), keyTypes: m.Table.KeyTypes(), stats: newStats(totals),
		stop: newStopper(ctx, opts.WriteGrace), events: make(chan event, 4*wo.writers()+64),
		positions: opts.Checkpoint != nil}
	defer r.stop.end()
	ack := newAcknowledger(opts, plans, r.stats, r.stop, parts, byEntity)
	if err := ack.plan(res.skip); err != nil {
		return nil, err
	}
	acked := make(chan struct{})
	go func() { defer close(acked); ack.run(r.events) }()
	if opts.Auto != nil {
		wo.OnWriters = func(n int) { r.events <- event{kind: evWriters, rows: n} }
	}
	r.writes = NewWrites(sink, r.keyAttrs, wo)
	err = r.execute(tasks, srcs)
	r.writes.Close()
	close(r.events)
	<-acked
	if err == nil {
		err = ack.err
	}
	sum := r.stats.summary(plans, started)
	sum.Autoscale = r.writes.Autoscale()
	return sum, err
}

// run is what the readers of one Run and the Groups of its Writes share.
type run struct {
	plans    []*transform.Plan
	keyAttrs [2]string
	keyTypes [2]string
	stats    *stats
	stop     *stopper
	writes   *Writes
	// events go to the acknowledger, in order.
	events chan event
	// positions: acknowledgements carry their batch's last row's position.
	positions bool
}

// execute runs a reader per source, then waits for the Groups; readers' errors
// first.
func (r *run) execute(tasks []task, srcs []RowSource) error {
	var rg errgroup.Group
	var next atomic.Int64
	readers := make([]*reader, len(srcs))
	for j, src := range srcs {
		rd := newReader(r, src)
		readers[j] = rd
		rg.Go(func() error {
			for k := int(next.Add(1)) - 1; k < len(tasks); k = int(next.Add(1)) - 1 {
				if err := rd.readTask(&tasks[k]); err != nil {
					err = r.stop.readErr(err)
					r.stop.stopReading(err)
					return err
				}
			}
			return nil
		})
	}
	err := rg.Wait()
	for _, rd := range readers {
		for _, g := range rd.groups {
			if _, werr := g.Wait(); err == nil {
				err = werr
			}
		}
	}
	return err
}

func planned(plans []*transform.Plan, totals []int64, skip []bool) []PlannedEntity {
	out := make([]PlannedEntity, len(plans))
	for i, p := range plans {
		out[i] = PlannedEntity{Name: p.Entity().Name, Rows: totals[i], Done: skip[i]}
	}
	return out
}

func countRows(ctx context.Context, src RowSource, plans []*transform.Plan) ([]int64, error) {
	totals := make([]int64, len(plans))
	for i, p := range plans {
		n, err := src.Count(ctx, p.Entity())
		if err != nil {
			return nil, err
		}
		totals[i] = n
	}
	return totals, nil
}

// forkReaders returns src and n-1 forks, and a function closing the forks.
func forkReaders(ctx context.Context, src RowSource, n int) ([]RowSource, func(), error) {
	srcs := []RowSource{src}
	closeForks := func() {
		for _, f := range srcs[1:] {
			f.Close(context.WithoutCancel(ctx))
		}
	}
	for len(srcs) < n {
		f, err := src.Fork(ctx)
		if err != nil {
			closeForks()
			return nil, nil, fmt.Errorf("parallel reader %d of %d: %w (a server that cannot export snapshots, such as some poolers in transaction mode, needs a single reader: Options.Readers 1, --readers 1)", len(srcs)+1, n, err)
		}
		srcs = append(srcs, f)
	}
	return srcs, closeForks, nil
}
