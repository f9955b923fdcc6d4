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

// Run migrates the entities of plans from src into sink.
//
// Reading: opts.Readers readers read and transform. Reader 0 uses src; the
// others forks of it (RowSource.Fork: for PostgreSQL, connections on src's
// exported snapshot), so all read one consistent point in time. Plans
// read in primary-key order when their source has one
// (transform.Plan.Ordered); an entity that does and holds at least
// 2×MinRangeRows rows is split into key ranges, one per reader
// (RowSource.Positions); the parts of all entities are handed out in mapping
// order. Writing: a Writes of opts.Concurrency writers (with opts.Auto, as
// many as an Autoscaler decides, at its pace) calls sink.Write; each part
// read is a Group of it.
//
// Duplicate keys: no batch holds two items of one primary key, and unless
// opts.SkipDuplicateCheck, no two items of the run do. Entities whose keys
// transform.KeysUnique proves unique are read in parallel parts and only
// their batches checked. The others form collision groups (entities whose
// keys may meet, transform.KeysMayMeet); a group is read by one reader, in
// one range per entity, its entities in mapping order and each in
// primary-key order, while it claims each row's keys in the group's key
// set. So of two rows with one key the earlier in that order keeps it,
// whatever opts.Readers, in every run over the same data; the later is
// rejected, its reason naming the key and the row that keeps it. A
// resumed run (opts.Checkpoint) first reads again what the group's
// recorded ranges say was written, claiming keys without writing, counting
// or rejecting, so that it reaches the decisions of an uninterrupted run.
// A source without a primary key (a query) is claimed in the order it
// returns its rows.
//
// Rows that cannot become items, and items the sink reports as failed, go
// to opts.OnReject. Run returns the summary together with the first fatal
// error (from the source, the sink, a callback, or ctx's cause). When the
// reading stops early (ctx done, a source error), the rows already read
// are still written, so that the summary describes the table.
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
	// One batch waits a writer: the readers keep no more than that in
	// memory ahead of the writes (rows may be large).
	wo := WritesOptions{Concurrency: opts.Concurrency, Auto: opts.Auto, Queue: 1, KeyTypes: m.Table.KeyTypes()}
	r := &run{plans: plans, keyAttrs: m.Table.Keys(), keyTypes: m.Table.KeyTypes(), stats: newStats(totals),
		stop: newStopper(ctx, opts.WriteGrace), events: make(chan event, 4*wo.writers()+64),
		positions: opts.Checkpoint != nil}
	defer r.stop.end()
	ack := newAcknowledger(opts, plans, r.stats, r.stop, parts, byEntity)
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
	// keyTypes are the key attributes' types (mapping.Table.KeyTypes).
	keyTypes [2]string
	stats    *stats
	stop     *stopper
	writes   *Writes
	// events go to the acknowledger, in order.
	events chan event
	// positions: the acknowledgements carry the position of their
	// batch's last row (for the Checkpoint).
	positions bool
}

// execute runs one reader per source, handing out tasks in order, each
// read whole by one reader, then waits for the Groups of the parts read to
// be written; it returns the first error, the readers' before the Groups'.
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

// planned is what Progress.Plan is told: plans with their row counts,
// and which of them a resumed run skips.
func planned(plans []*transform.Plan, totals []int64, skip []bool) []PlannedEntity {
	out := make([]PlannedEntity, len(plans))
	for i, p := range plans {
		out[i] = PlannedEntity{Name: p.Entity().Name, Rows: totals[i], Done: skip[i]}
	}
	return out
}

// countRows returns each plan's row count in the snapshot.
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

// forkReaders returns n sources for n readers: src and n-1 forks, and a
// function closing the forks.
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
